/**
 * Smart analytics: segments, heatmap, relative-weight drivers, focus areas, participation and comparisons, on
 * the scope and measurements of service.ts.
 */
import type { components } from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { iso } from '../../lib/time.js';
import { measureManagerTree, type TreeGroup } from './manager-tree.js';
import { relativeWeights } from './relative-weights.js';
import * as repository from './repository.js';
import type { AnalyticsScope } from './repository.js';
import {
  contextOf,
  measureScope,
  outcomeOrThrow,
  parseSegment,
  participationOf,
  treeManagerOrThrow,
  type AnalyticsRequest,
  type Context,
  type Measured,
} from './service.js';
import {
  favourableCut,
  favourableShareOf,
  matrixRowHistogram,
  meanOf,
  npsOf,
  round,
  type Histogram,
} from './statistics.js';
import { resultSuppressed } from './suppression.js';
import { previousCycleComparison } from './trends.js';

type Question = components['schemas']['Question'];
type SmartAnalytics = components['schemas']['SmartAnalytics'];
type SmartSegment = components['schemas']['SmartAnalyticsSegment'];
type Heatmap = components['schemas']['SmartAnalyticsHeatmap'];
type DriverAnalysis = NonNullable<components['schemas']['SmartAnalyticsDriverAnalysis']>;
type Driver = components['schemas']['SmartAnalyticsDriver'];
type Comparison = components['schemas']['SmartAnalyticsComparison'];

/** Fewest complete responses for driver analysis (unless the anonymity threshold is higher). */
export const MINIMUM_DRIVER_RESPONSES = 30;

export interface SmartRequest extends AnalyticsRequest {
  outcomeQuestionId?: string;
  heatmapMetric?: 'mean' | 'favourable';
  /** `previousCycle`: compare with the survey cycle before (trends.ts); otherwise the distribution or period. */
  compareTo?: 'auto' | 'previousCycle';
}

/** A heatmap column: a scored question, or one row of a Likert grid scored as a rating of the grid's scale. */
interface HeatmapColumn {
  question: Question;
  row?: { id: string; text: string };
  scored: Question;
  histogramOf(histograms: Map<number, Histogram>): Histogram | undefined;
}

function scoreOf(question: Question, histogram: Histogram | undefined, metric: 'mean' | 'favourable'): number | null {
  if (!histogram) return null;
  return metric === 'mean' ? meanOf(histogram) : favourableShareOf(histogram, question);
}

function ratingAverage(questions: Question[], histograms: Map<number, Histogram>): number | null {
  const all: Histogram = new Map();
  questions.forEach((question, position) => {
    if (question.type !== 'rating') return;
    for (const [value, count] of histograms.get(position) ?? []) all.set(value, (all.get(value) ?? 0) + count);
  });
  const mean = meanOf(all);
  return mean === null ? null : round(mean, 2);
}

async function driverAnalysis(
  db: Db,
  scope: AnalyticsScope,
  questions: Question[],
  outcome: number | undefined,
  threshold: number,
): Promise<{ analysis: DriverAnalysis; drivers: Driver[] }> {
  const minimumResponses = Math.max(MINIMUM_DRIVER_RESPONSES, threshold);
  const analysis: DriverAnalysis = {
    method: 'relative_weights',
    outcomeQuestionId: outcome === undefined ? null : questions[outcome]!.id,
    status: 'computed',
    minimumResponses,
    responseCount: 0,
    rSquared: null,
  };
  if (outcome === undefined) return { analysis: { ...analysis, status: 'no_outcome' }, drivers: [] };
  const driverPositions = questions.flatMap((question, position) =>
    question.type === 'rating' && position !== outcome ? [position] : [],
  );
  if (driverPositions.length === 0) return { analysis: { ...analysis, status: 'no_drivers' }, drivers: [] };
  const positions = [outcome, ...driverPositions];
  const matrix = await repository.correlations(db, scope, {
    positions: positions.map((position) => position + 1),
    favourableAbove: positions.map((position) => favourableCut(questions[position]!)),
  });
  if (matrix.n < minimumResponses)
    return { analysis: { ...analysis, status: 'too_few_responses', responseCount: matrix.n }, drivers: [] };
  const degenerate = { analysis: { ...analysis, status: 'degenerate' as const, responseCount: matrix.n }, drivers: [] };
  if (matrix.corr.some((row) => row.some((value) => value === null))) return degenerate;
  const corr = matrix.corr as number[][];
  const rxx = corr.slice(1).map((row) => row.slice(1));
  const rxy = corr[0]!.slice(1);
  const result = relativeWeights(rxx, rxy);
  if (!result) return degenerate;
  const drivers = driverPositions
    .map((position, i): Driver => ({
      questionId: questions[position]!.id,
      text: questions[position]!.text,
      relativeWeight: round(Math.max(0, result.weights[i]!), 4),
      importance: result.rSquared > 0 ? round((100 * result.weights[i]!) / result.rSquared, 1) : 0,
      correlation: round(rxy[i]!, 3),
      responseCount: matrix.n,
      average: round(matrix.means[i + 1]!, 2),
      favourable: round((100 * matrix.favourable[i + 1]!) / matrix.n, 1),
    }))
    .sort((a, b) => b.relativeWeight - a.relativeWeight);
  return {
    analysis: { ...analysis, responseCount: matrix.n, rSquared: round(Math.min(1, Math.max(0, result.rSquared)), 4) },
    drivers,
  };
}

/** High impact (weight at or above the mean weight) and low score (favourable below the drivers' mean). */
export function focusAreasOf(drivers: Driver[], rSquared: number | null): SmartAnalytics['focusAreas'] {
  if (drivers.length === 0 || rSquared === null) return [];
  const meanWeight = rSquared / drivers.length;
  const meanFavourable = drivers.reduce((sum, driver) => sum + driver.favourable, 0) / drivers.length;
  return drivers
    .filter((driver) => driver.relativeWeight >= meanWeight && driver.favourable < meanFavourable)
    .slice(0, 3)
    .map(({ questionId, text, relativeWeight, importance, favourable }) => ({
      questionId,
      text,
      relativeWeight,
      importance,
      favourable,
    }));
}

function previousPeriod(request: AnalyticsRequest): { after: Date; before: Date } | undefined {
  if (request.submittedAfter === undefined || request.submittedBefore === undefined) return undefined;
  const after = new Date(request.submittedAfter);
  const before = new Date(request.submittedBefore);
  const length = before.getTime() - after.getTime();
  // No previous period before the year 1 (the API's timestamps have four-digit years).
  if (after.getTime() - length < Date.UTC(1, 0, 1)) return undefined;
  return { after: new Date(after.getTime() - length), before: after };
}

async function comparisonOf(
  db: Db,
  context: Context,
  request: AnalyticsRequest,
  current: Map<number, Histogram>,
): Promise<Comparison> {
  const period = previousPeriod(request);
  let scope: AnalyticsScope;
  let base: Pick<
    NonNullable<Comparison>,
    'basis' | 'distributionId' | 'surveyId' | 'submittedAfter' | 'submittedBefore'
  >;
  if (context.previousDistributionId !== null) {
    scope = { ...context.scope, segment: undefined, distributionId: context.previousDistributionId };
    base = {
      basis: 'previous_distribution',
      distributionId: context.previousDistributionId,
      surveyId: null,
      submittedAfter: null,
      submittedBefore: null,
    };
  } else if (period) {
    scope = { ...context.scope, segment: undefined, submittedAfter: period.after, submittedBefore: period.before };
    base = {
      basis: 'previous_period',
      distributionId: null,
      surveyId: null,
      submittedAfter: iso(period.after),
      submittedBefore: iso(period.before),
    };
  } else {
    return null;
  }
  const previous = await measureScope(db, scope, context.threshold);
  if (resultSuppressed(previous.whole.respondents, context.threshold))
    return { ...base, suppressed: true, responseCount: null, questions: [] };
  const questions = context.survey.questions.flatMap((question, position) => {
    if (question.type !== 'nps' && question.type !== 'rating') return [];
    const value = (histogram: Histogram | undefined) =>
      !histogram ? null : question.type === 'nps' ? npsOf(histogram).score : meanOf(histogram);
    const now = value(current.get(position));
    const before = value(previous.whole.histograms.get(position));
    const decimals = question.type === 'nps' ? 1 : 2;
    return [
      {
        questionId: question.id,
        key: null,
        previousQuestionId: null,
        metric: question.type === 'nps' ? ('nps' as const) : ('mean' as const),
        current: now === null ? null : round(now, decimals),
        previous: before === null ? null : round(before, decimals),
        change: now === null || before === null ? null : round(now - before, decimals),
      },
    ];
  });
  return { ...base, suppressed: false, responseCount: previous.whole.responses, questions };
}

type Group = Measured['groups'][number] & { group?: TreeGroup['group'] };

/** The groups segments and heatmap rows show: a manager's tree (static analytics' rows and rules), else the field's. */
function managerTreeRows(measured: Measured, tree: TreeGroup[] | undefined): Group[] {
  return tree ?? measured.groups;
}

/** Which row of a manager's tree a group is, on the rows of `segmentBy=managerTree` only. */
const treeGroupOf = (group: Group) => (group.group ? { managerTreeGroup: group.group } : {});

export async function getSmartAnalytics(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: SmartRequest,
): Promise<SmartAnalytics> {
  const segmentBy = request.segmentBy ?? 'department';
  // segmentBy=managerTree: the rows of the manager's tree stand where the groups of a field would (managerTreeRows).
  const manager = treeManagerOrThrow(request);
  const segment = manager === undefined ? parseSegment(segmentBy)! : undefined;
  const context = await contextOf(db, tenant, surveyId, request, segment);
  const { survey, threshold, scope } = context;
  const questions = survey.questions;
  const outcome = outcomeOrThrow(questions, request.outcomeQuestionId);
  const metric = request.heatmapMetric ?? 'mean';
  const [measured, drivers, participation, tree] = await Promise.all([
    measureScope(db, scope, threshold),
    driverAnalysis(db, { ...scope, segment: undefined }, questions, outcome, threshold),
    participationOf(db, context),
    manager === undefined ? undefined : measureManagerTree(db, scope, manager, threshold),
  ]);
  const groups = managerTreeRows(measured, tree);
  // One column per scored question, and per row of a Likert grid, scored like a rating of its scale.
  const columns: HeatmapColumn[] = questions.flatMap((question, position): HeatmapColumn[] => {
    if (question.type === 'nps' || question.type === 'rating')
      return [{ question, scored: question, histogramOf: (histograms) => histograms.get(position) }];
    if (question.type !== 'matrix' || !question.scale) return [];
    const { min, max } = question.scale;
    return question.rows.map((row, index) => ({
      question,
      row,
      scored: { ...question, type: 'rating', min, max, minLabel: null, maxLabel: null },
      histogramOf: (histograms) => {
        const whole = histograms.get(position);
        return whole && matrixRowHistogram(whole, index);
      },
    }));
  });
  const base = {
    surveyId,
    segmentBy,
    anonymityThreshold: threshold,
    submittedAfter: request.submittedAfter ?? null,
    submittedBefore: request.submittedBefore ?? null,
    distributionId: request.distributionId ?? null,
    // Invitations come from distributions; without any, nobody was invited.
    participation: participation ?? { invited: 0, responded: 0, rate: null, segments: [] },
    generatedAt: iso(new Date()),
  };
  if (resultSuppressed(measured.whole.respondents, threshold)) {
    return {
      ...base,
      responseCount: 0,
      suppressed: true,
      segments: [],
      heatmap: { metric, questions: [], rows: [] },
      participation: { invited: 0, responded: 0, rate: null, segments: [] },
      driverAnalysis: null,
      drivers: [],
      focusAreas: [],
      comparison: null,
    };
  }
  const npsPosition = questions.findIndex((question) => question.type === 'nps');
  const segments = groups.map((group): SmartSegment => {
    if (group.suppressed)
      return {
        value: group.value,
        ...treeGroupOf(group),
        responseCount: null,
        suppressed: true,
        nps: null,
        averageRating: null,
      };
    const score = npsPosition < 0 ? null : npsOf(group.histograms.get(npsPosition) ?? new Map()).score;
    return {
      value: group.value,
      ...treeGroupOf(group),
      responseCount: group.responses,
      suppressed: false,
      nps: score === null ? null : round(score, 1),
      averageRating: ratingAverage(questions, group.histograms),
    };
  });
  const decimals = metric === 'mean' ? 2 : 1;
  const overall = columns.map((column) =>
    scoreOf(column.scored, column.histogramOf(measured.whole.histograms), metric),
  );
  const heatmap: Heatmap = {
    metric,
    questions: columns.map(({ question, row }, i) => ({
      questionId: question.id,
      ...(row ? { rowId: row.id } : {}),
      text: row ? row.text : question.text,
      type: question.type as 'nps' | 'rating' | 'matrix',
      overall: overall[i] === null ? null : round(overall[i]!, decimals),
    })),
    rows: groups.map((group) => ({
      value: group.value,
      ...treeGroupOf(group),
      suppressed: group.suppressed,
      cells: columns.map((column, i) => {
        const score = group.suppressed ? null : scoreOf(column.scored, column.histogramOf(group.histograms), metric);
        const whole = overall[i] ?? null;
        return {
          questionId: column.question.id,
          ...(column.row ? { rowId: column.row.id } : {}),
          score: score === null ? null : round(score, decimals),
          difference: score === null || whole === null ? null : round(score - whole, decimals),
        };
      }),
    })),
  };
  return {
    ...base,
    responseCount: measured.whole.responses,
    suppressed: false,
    segments,
    heatmap,
    driverAnalysis: drivers.analysis,
    drivers: drivers.drivers,
    focusAreas: focusAreasOf(drivers.drivers, drivers.analysis.rSquared),
    comparison:
      request.compareTo === 'previousCycle'
        ? await previousCycleComparison(db, context, measured.whole.histograms)
        : await comparisonOf(db, context, request, measured.whole.histograms),
  };
}
