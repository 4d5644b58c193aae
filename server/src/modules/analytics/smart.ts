/**
 * Smart analytics: segments, heatmap, relative-weight drivers, focus areas, participation and comparisons, on
 * the scope and measurements of core.ts.
 */
import type {
  Question,
  SmartAnalytics,
  SmartAnalyticsComparison as Comparison,
  SmartAnalyticsDriver as Driver,
  SmartAnalyticsDriverAnalysis,
  SmartAnalyticsHeatmap as Heatmap,
  SmartAnalyticsSegment as SmartSegment,
} from '../../generated/openapi.js';
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
} from './core.js';
import {
  favourableCut,
  favourableShareOf,
  matrixRowCodes,
  matrixRowHistogram,
  meanOf,
  npsOf,
  round,
  type Histogram,
} from './statistics.js';
import { hiddenReason, resultSuppressed } from './suppression.js';
import { auditShown, measuredStill, segmentKey, treeKey } from './release-gate.js';
import { previousCycleComparison } from './trends.js';

type DriverAnalysis = NonNullable<SmartAnalyticsDriverAnalysis>;

/** Fewest complete responses for driver analysis (unless the anonymity threshold is higher). */
export const MINIMUM_DRIVER_RESPONSES = 30;
/**
 * Most drivers: the first in survey order (grid rows in row order). The correlation matrix of the outcome and 55
 * drivers is 1,653 aggregates (1 + 2·56 + 56·55/2), the most one query can hold: a parallel plan passes each as a
 * column, and PostgreSQL allows 1,664. Their cost also grows with the square: 5 s over 100,000 responses at 55.
 */
export const MAXIMUM_DRIVERS = 55;

export interface SmartRequest extends AnalyticsRequest {
  outcomeQuestionId?: string;
  heatmapMetric?: 'mean' | 'favourable';
  /** `previousCycle`: compare with the survey cycle before (trends.ts); otherwise the distribution or period. */
  compareTo?: 'auto' | 'previousCycle';
}

/**
 * A scored column: an nps or rating question, or one row of a Likert grid (a matrix with a numeric scale) scored
 * as a rating of the grid's scale. The heatmap's columns, and (ratings and rows) the drivers. A grid with labelled
 * columns is categorical and gives none.
 */
interface ScoredColumn {
  question: Question;
  position: number;
  row?: { id: string; text: string; index: number };
  scored: Question;
}

function scoredColumns(questions: Question[]): ScoredColumn[] {
  return questions.flatMap((question, position): ScoredColumn[] => {
    if (question.type === 'nps' || question.type === 'rating') return [{ question, position, scored: question }];
    if (question.type !== 'matrix' || !question.scale) return [];
    const { min, max } = question.scale;
    const scored: Question = { ...question, type: 'rating', min, max, minLabel: null, maxLabel: null };
    return question.rows.map((row, index) => ({ question, position, row: { ...row, index }, scored }));
  });
}

/** The column's histogram among the questions' histograms (a grid row's part of its question's). */
function histogramOf(column: ScoredColumn, histograms: Map<number, Histogram>): Histogram | undefined {
  const whole = histograms.get(column.position);
  return column.row ? whole && matrixRowHistogram(whole, column.row.index) : whole;
}

/** Names the column in the contract: its question, and its grid row if it is one. */
const columnIds = (column: ScoredColumn) => ({
  questionId: column.question.id,
  ...(column.row ? { rowId: column.row.id } : {}),
});

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
  // Every rating question but the outcome, and every row of a Likert grid (the heatmap's columns, nps aside).
  const predictors = scoredColumns(questions)
    .filter((column) => column.scored.type === 'rating' && (column.row !== undefined || column.position !== outcome))
    .slice(0, MAXIMUM_DRIVERS);
  if (predictors.length === 0) return { analysis: { ...analysis, status: 'no_drivers' }, drivers: [] };
  // A question's answer is its one number in `nums`; a grid row's is its cell (an N/A row has none: no value).
  const variables: repository.CorrelationVariable[] = [
    { num: outcome + 1 },
    ...predictors.map((column) =>
      column.row ? { cells: matrixRowCodes(column.position, column.row.index) } : { num: column.position + 1 },
    ),
  ];
  const matrix = await repository.correlations(db, scope, {
    variables,
    favourableAbove: [favourableCut(questions[outcome]!), ...predictors.map((column) => favourableCut(column.scored))],
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
  const drivers = predictors
    .map((column, i): Driver => ({
      ...columnIds(column),
      text: column.row ? column.row.text : column.question.text,
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
    .map(({ questionId, rowId, text, relativeWeight, importance, favourable }) => ({
      questionId,
      ...(rowId === undefined ? {} : { rowId }),
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
  // The earlier result is released too: through the audit (a response that came or went meanwhile withholds it).
  const audited = await auditShown(db, scope, context.threshold, new Map([['whole', previous.whole.responses]]));
  if (audited.withheld.size > 0) return { ...base, suppressed: true, responseCount: null, questions: [] };
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

/**
 * Smart analytics, released through the audit of the survey's released results like static analytics
 * (release-gate.ts): the whole result and each segment or tree row the anonymity rules let through, and the
 * comparison's earlier result.
 */
export async function getSmartAnalytics(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: SmartRequest,
): Promise<SmartAnalytics> {
  return measuredStill((lastTry) => measureSmartAnalytics(db, tenant, surveyId, request, lastTry));
}

async function measureSmartAnalytics(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: SmartRequest,
  lastTry: boolean,
): Promise<SmartAnalytics | undefined> {
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
  const hidden = resultSuppressed(measured.whole.respondents, threshold);
  const keyOf = (group: Group) =>
    group.group ? treeKey({ group: group.group, value: group.value! }) : segmentKey(group.value);
  const shown = new Map<string, number>(hidden ? [] : [['whole', measured.whole.responses]]);
  if (!hidden)
    for (const group of managerTreeRows(measured, tree))
      if (!group.suppressed) shown.set(keyOf(group), group.responses);
  const { withheld, moved } = await auditShown(db, scope, threshold, shown, manager);
  if (moved && !lastTry) return undefined;
  // A group the audit withholds is shown as suppressed, everywhere groups are (segments and heatmap rows).
  const groups = managerTreeRows(measured, tree).map((group) =>
    withheld.has(keyOf(group)) ? { ...group, suppressed: true, withheld: true } : { ...group, withheld: false },
  );
  const reasonOf = (group: (typeof groups)[number]) =>
    group.withheld ? 'released_overlap' : group.suppressed ? hiddenReason(group.respondents, threshold) : null;
  // One column per scored question, and per row of a Likert grid, scored like a rating of its scale.
  const columns = scoredColumns(questions);
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
  if (hidden || withheld.has('whole')) {
    return {
      ...base,
      responseCount: 0,
      suppressed: true,
      suppressionReason: hidden ? 'threshold' : 'released_overlap',
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
        suppressionReason: reasonOf(group),
        nps: null,
        averageRating: null,
      };
    const score = npsPosition < 0 ? null : npsOf(group.histograms.get(npsPosition) ?? new Map()).score;
    return {
      value: group.value,
      ...treeGroupOf(group),
      responseCount: group.responses,
      suppressed: false,
      suppressionReason: null,
      nps: score === null ? null : round(score, 1),
      averageRating: ratingAverage(questions, group.histograms),
    };
  });
  const decimals = metric === 'mean' ? 2 : 1;
  const overall = columns.map((column) =>
    scoreOf(column.scored, histogramOf(column, measured.whole.histograms), metric),
  );
  const heatmap: Heatmap = {
    metric,
    questions: columns.map((column, i) => ({
      ...columnIds(column),
      text: column.row ? column.row.text : column.question.text,
      type: column.question.type as 'nps' | 'rating' | 'matrix',
      overall: overall[i] === null ? null : round(overall[i]!, decimals),
    })),
    rows: groups.map((group) => ({
      value: group.value,
      ...treeGroupOf(group),
      suppressed: group.suppressed,
      cells: columns.map((column, i) => {
        const score = group.suppressed ? null : scoreOf(column.scored, histogramOf(column, group.histograms), metric);
        const whole = overall[i] ?? null;
        return {
          ...columnIds(column),
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
    suppressionReason: null,
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
