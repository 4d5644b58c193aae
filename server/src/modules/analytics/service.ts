/**
 * Static and smart analytics: runs the aggregate queries of the repository in parallel, applies the anonymity
 * rules (suppression.ts) and turns histograms and correlation matrices into the contract's figures.
 */
import type { components } from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/schema.js';
import { notFound, validationFailed } from '../../http/errors.js';
import { iso } from '../../lib/time.js';
import { findSurveyOrThrow } from '../surveys/service.js';
import type { SurveyRow } from '../surveys/repository.js';
import { compileTargeting, recipientsTarget, type TargetShape } from '../targeting/index.js';
import { relativeWeights } from './relative-weights.js';
import * as repository from './repository.js';
import type { AnalyticsScope, CellRow, GroupRow, SegmentField } from './repository.js';
import {
  favourableCut,
  favourableShareOf,
  histogramsByPosition,
  meanOf,
  npsOf,
  questionStats,
  round,
  type Histogram,
} from './statistics.js';
import { orderGroups, resultSuppressed, suppressedGroups } from './suppression.js';

type Question = components['schemas']['Question'];
type StaticAnalytics = components['schemas']['StaticAnalytics'];
type SmartAnalytics = components['schemas']['SmartAnalytics'];
type StaticSegment = components['schemas']['StaticAnalyticsSegment'];
type SmartSegment = components['schemas']['SmartAnalyticsSegment'];
type Heatmap = components['schemas']['SmartAnalyticsHeatmap'];
type DriverAnalysis = NonNullable<components['schemas']['SmartAnalyticsDriverAnalysis']>;
type Driver = components['schemas']['SmartAnalyticsDriver'];
type Comparison = components['schemas']['SmartAnalyticsComparison'];

/** Fewest complete responses for driver analysis (unless the anonymity threshold is higher). */
export const MINIMUM_DRIVER_RESPONSES = 30;

export interface AnalyticsRequest {
  submittedAfter?: string;
  submittedBefore?: string;
  distributionId?: string;
  segmentBy?: string;
  /** The `filters` query parameter: JSON text of `{ filters, logic }`. */
  filters?: string;
}

/** The respondent of a response, as analytics sees it (see repository.subjectJoin). */
const subjectTarget: TargetShape = { alias: 'who' };
const recipientTarget: TargetShape = { ...recipientsTarget, alias: 'dr' };

/**
 * Parses and checks `filters` with the targeting module (the distribution's filter language); every problem is
 * a 400 under /query/filters. Returns the condition over responses' respondents and over recipients.
 */
export function parseFilters(text: string | undefined): { responses: AnalyticsScope['filter']; recipients: AnalyticsScope['filter'] } | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw validationFailed([{ path: '/query/filters', message: 'must be the JSON text of an object { "filters": [...], "logic": "AND" | "OR" }', code: 'format' }]);
  }
  const unknown = (value: unknown, allowed: string[], at: string) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.keys(value).filter((key) => !allowed.includes(key)).map((key) => ({ path: `${at}/${key}`, message: `unknown field "${key.slice(0, 80)}"`, code: 'unknown_field' }))
      : [];
  const problems = unknown(parsed, ['filters', 'logic'], '/query/filters');
  const filters = (parsed as { filters?: unknown } | null)?.filters;
  if (Array.isArray(filters)) filters.forEach((filter, i) => problems.push(...unknown(filter, ['field', 'operator', 'value'], `/query/filters/filters/${i}`)));
  if (problems.length > 0) throw validationFailed(problems);
  return {
    responses: compileTargeting(parsed, subjectTarget, '/query/filters'),
    recipients: compileTargeting(parsed, recipientTarget, '/query/filters'),
  };
}

const segmentColumns: Record<string, SegmentField> = {
  department: { kind: 'column', column: 'department' },
  location: { kind: 'column', column: 'location' },
  jobTitle: { kind: 'column', column: 'job_title' },
  employmentType: { kind: 'column', column: 'employment_type' },
  managerId: { kind: 'column', column: 'manager_id' },
  tenure: { kind: 'tenure' },
};

/** The validator has checked the shape (enum or `attributes.<name>`); this maps it to SQL terms. */
export function parseSegment(segmentBy: string | undefined): SegmentField | undefined {
  if (segmentBy === undefined) return undefined;
  const known = segmentColumns[segmentBy];
  if (known) return known;
  const attribute = /^attributes\.([A-Za-z0-9_]{1,64})$/.exec(segmentBy);
  if (attribute) return { kind: 'attribute', name: attribute[1]! };
  throw validationFailed([{ path: '/query/segmentBy', message: `"${segmentBy}" is not a respondent field to group by`, code: 'enum' }]);
}

function windowOrThrow(request: AnalyticsRequest): { after?: Date; before?: Date } {
  const after = request.submittedAfter === undefined ? undefined : new Date(request.submittedAfter);
  const before = request.submittedBefore === undefined ? undefined : new Date(request.submittedBefore);
  if (after && before && before <= after) {
    throw validationFailed([{ path: '/query/submittedBefore', message: 'must be later than submittedAfter', code: 'out_of_range' }]);
  }
  return { after, before };
}

interface Context {
  survey: SurveyRow;
  threshold: number;
  scope: AnalyticsScope;
  /** The recipients' side of the filter (over the snapshot), for participation. */
  recipientFilter: AnalyticsScope['filter'];
  previousDistributionId: string | null;
}

async function contextOf(db: Db, tenant: Tenant, surveyId: string, request: AnalyticsRequest, segment: SegmentField | undefined): Promise<Context> {
  const window = windowOrThrow(request);
  const filters = parseFilters(request.filters);
  const [survey, { threshold }, snapshots] = await Promise.all([
    findSurveyOrThrow(db, tenant, surveyId),
    repository.findThreshold(db, tenant),
    repository.hasDistributions(db, tenant, surveyId),
  ]);
  let previousDistributionId: string | null = null;
  if (request.distributionId !== undefined) {
    const distribution = await repository.findDistribution(db, tenant, surveyId, request.distributionId);
    if (!distribution) throw notFound('distribution', request.distributionId);
    previousDistributionId = distribution.previousId;
  }
  const scope: AnalyticsScope = {
    tenant,
    surveyId,
    submittedAfter: window.after,
    submittedBefore: window.before,
    distributionId: request.distributionId,
    segment,
    filter: filters?.responses,
    distinctRespondents: survey.settings.allowMultipleResponses && !survey.settings.anonymous,
    snapshots,
  };
  return { survey, threshold, scope, recipientFilter: filters?.recipients, previousDistributionId };
}

type Participation = SmartAnalytics['participation'];

/** Invited, responded and rate, overall and per group, with the anonymity rules on the groups' invitees. */
async function participationOf(db: Db, context: Context): Promise<Participation | undefined> {
  if (!context.scope.snapshots) return undefined;
  const rows = await repository.participation(db, context.scope, context.recipientFilter);
  const whole = rows.find((row) => row.whole) ?? { invited: 0, responded: 0 };
  const groups = rows.filter((row) => !row.whole);
  const hidden = suppressedGroups(groups.map((row) => ({ respondents: row.invited })), context.threshold);
  const rate = (responded: number, invited: number) => (invited === 0 ? null : round(responded / invited, 3));
  const segments = orderGroups(groups.map((row, index) => ({ ...row, value: row.segment, responses: row.invited, suppressed: hidden.has(index) }))).map((row) =>
    row.suppressed
      ? { value: row.value, suppressed: true, invited: null, responded: null, rate: null }
      : { value: row.value, suppressed: false, invited: row.invited, responded: row.responded, rate: rate(row.responded, row.invited) },
  );
  return { invited: whole.invited, responded: whole.responded, rate: rate(whole.responded, whole.invited), segments: context.scope.segment ? segments : [] };
}

interface Group {
  value: string | null;
  responses: number;
  respondents: number;
  suppressed: boolean;
  histograms: Map<number, Histogram>;
}

interface Measured {
  whole: { responses: number; respondents: number; histograms: Map<number, Histogram> };
  groups: Group[];
  days: { date: string; count: number }[];
}

const DAY = 86_400_000;

/** Splits one scan's rows into responses per day (negative codes) and question histograms. */
function summarise(rows: CellRow[]): { responses: number; days: Map<number, number>; histograms: Map<number, Histogram> } {
  const days = new Map<number, number>();
  const cells: CellRow[] = [];
  let responses = 0;
  for (const row of rows) {
    if (row.code < 0) {
      days.set(-1 - row.code, row.n);
      responses += row.n;
    } else cells.push(row);
  }
  return { responses, days, histograms: histogramsByPosition(cells) };
}

/** Sizes, days and histograms, with the anonymity rules applied to the groups. */
function measure(cells: CellRow[], threshold: number, distinct?: GroupRow[]): Measured {
  const wholeRows: CellRow[] = [];
  const bySegment = new Map<string | null, CellRow[]>();
  for (const cell of cells) {
    if (cell.whole) wholeRows.push(cell);
    else {
      const rows = bySegment.get(cell.segment);
      if (rows) rows.push(cell);
      else bySegment.set(cell.segment, [cell]);
    }
  }
  const whole = summarise(wholeRows);
  const respondentsOf = (segment: string | null, isWhole: boolean, responses: number) =>
    distinct?.find((row) => row.whole === isWhole && (isWhole || row.segment === segment))?.respondents ?? responses;
  const sized = [...bySegment].map(([value, rows]) => {
    const summary = summarise(rows);
    return { value, summary, responses: summary.responses, respondents: respondentsOf(value, false, summary.responses) };
  });
  const hidden = suppressedGroups(sized, threshold);
  const groups = sized.map((group, index) => ({
    value: group.value,
    responses: group.responses,
    respondents: group.respondents,
    suppressed: hidden.has(index),
    // A suppressed group's histograms are dropped here, so that no code path can show them.
    histograms: hidden.has(index) ? new Map<number, Histogram>() : group.summary.histograms,
  }));
  return {
    whole: { responses: whole.responses, respondents: respondentsOf(null, true, whole.responses), histograms: whole.histograms },
    groups: orderGroups(groups),
    days: [...whole.days].sort(([a], [b]) => a - b).map(([day, count]) => ({ date: new Date(day * DAY).toISOString().slice(0, 10), count })),
  };
}

/** One scan (plus the distinct-respondent count when a survey takes several responses per respondent). */
async function measureScope(db: Db, scope: AnalyticsScope, threshold: number): Promise<Measured> {
  const [cells, distinct] = await Promise.all([
    repository.cellCounts(db, scope),
    scope.distinctRespondents ? repository.distinctRespondents(db, scope) : Promise.resolve(undefined),
  ]);
  return measure(cells, threshold, distinct);
}

export async function getStaticAnalytics(db: Db, tenant: Tenant, surveyId: string, request: AnalyticsRequest): Promise<StaticAnalytics> {
  const segment = parseSegment(request.segmentBy);
  const context = await contextOf(db, tenant, surveyId, request, segment);
  const { survey, threshold, scope } = context;
  const [measured, participation] = await Promise.all([
    measureScope(db, scope, threshold),
    participationOf(db, { ...context, scope: { ...scope, segment: undefined } }),
  ]);
  const suppressed = resultSuppressed(measured.whole.respondents, threshold);
  const base = {
    surveyId,
    submittedAfter: request.submittedAfter ?? null,
    submittedBefore: request.submittedBefore ?? null,
    distributionId: request.distributionId ?? null,
    segmentBy: request.segmentBy ?? null,
    anonymityThreshold: threshold,
    // Recipients come from distributions; without any, there is no denominator.
    invitedCount: participation?.invited ?? null,
    responseRate: participation?.rate ?? null,
    generatedAt: iso(new Date()),
  };
  if (suppressed) return { ...base, invitedCount: null, responseRate: null, suppressed: true, responseCount: 0, questions: [], daily: [], segments: [] };
  const questions = survey.questions;
  return {
    ...base,
    suppressed: false,
    responseCount: measured.whole.responses,
    questions: questions.map((question, position) => questionStats(question, measured.whole.histograms.get(position))),
    daily: measured.days,
    segments: segment
      ? measured.groups.map((group): StaticSegment =>
          group.suppressed
            ? { value: group.value, suppressed: true, responseCount: null, questions: null }
            : {
                value: group.value,
                suppressed: false,
                responseCount: group.responses,
                questions: questions.map((question, position) => questionStats(question, group.histograms.get(position))),
              },
        )
      : [],
  };
}

export interface SmartRequest extends AnalyticsRequest {
  outcomeQuestionId?: string;
  heatmapMetric?: 'mean' | 'favourable';
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

function outcomeOrThrow(questions: Question[], outcomeQuestionId: string | undefined): number | undefined {
  if (outcomeQuestionId === undefined) {
    const first = questions.findIndex((question) => question.type === 'nps');
    return first < 0 ? undefined : first;
  }
  const position = questions.findIndex((question) => question.id === outcomeQuestionId);
  if (position < 0 || (questions[position]!.type !== 'nps' && questions[position]!.type !== 'rating')) {
    throw validationFailed([{ path: '/query/outcomeQuestionId', message: `"${outcomeQuestionId}" is not an nps or rating question of this survey`, code: 'invalid_value' }]);
  }
  return position;
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
  const driverPositions = questions.flatMap((question, position) => (question.type === 'rating' && position !== outcome ? [position] : []));
  if (driverPositions.length === 0) return { analysis: { ...analysis, status: 'no_drivers' }, drivers: [] };
  const positions = [outcome, ...driverPositions];
  const matrix = await repository.correlations(db, scope, {
    positions: positions.map((position) => position + 1),
    favourableAbove: positions.map((position) => favourableCut(questions[position]!)),
  });
  if (matrix.n < minimumResponses) return { analysis: { ...analysis, status: 'too_few_responses', responseCount: matrix.n }, drivers: [] };
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
  return { analysis: { ...analysis, responseCount: matrix.n, rSquared: round(Math.min(1, Math.max(0, result.rSquared)), 4) }, drivers };
}

/** High impact (weight at or above the mean weight) and low score (favourable below the drivers' mean). */
export function focusAreasOf(drivers: Driver[], rSquared: number | null): SmartAnalytics['focusAreas'] {
  if (drivers.length === 0 || rSquared === null) return [];
  const meanWeight = rSquared / drivers.length;
  const meanFavourable = drivers.reduce((sum, driver) => sum + driver.favourable, 0) / drivers.length;
  return drivers
    .filter((driver) => driver.relativeWeight >= meanWeight && driver.favourable < meanFavourable)
    .slice(0, 3)
    .map(({ questionId, text, relativeWeight, importance, favourable }) => ({ questionId, text, relativeWeight, importance, favourable }));
}

function previousPeriod(request: AnalyticsRequest): { after: Date; before: Date } | undefined {
  if (request.submittedAfter === undefined || request.submittedBefore === undefined) return undefined;
  const after = new Date(request.submittedAfter);
  const before = new Date(request.submittedBefore);
  const length = before.getTime() - after.getTime();
  return { after: new Date(after.getTime() - length), before: after };
}

async function comparisonOf(db: Db, context: Context, request: AnalyticsRequest, current: Map<number, Histogram>): Promise<Comparison> {
  const period = previousPeriod(request);
  let scope: AnalyticsScope;
  let base: Pick<NonNullable<Comparison>, 'basis' | 'distributionId' | 'submittedAfter' | 'submittedBefore'>;
  if (context.previousDistributionId !== null) {
    scope = { ...context.scope, segment: undefined, distributionId: context.previousDistributionId };
    base = { basis: 'previous_distribution', distributionId: context.previousDistributionId, submittedAfter: null, submittedBefore: null };
  } else if (period) {
    scope = { ...context.scope, segment: undefined, submittedAfter: period.after, submittedBefore: period.before };
    base = { basis: 'previous_period', distributionId: null, submittedAfter: iso(period.after), submittedBefore: iso(period.before) };
  } else {
    return null;
  }
  const previous = await measureScope(db, scope, context.threshold);
  if (resultSuppressed(previous.whole.respondents, context.threshold)) return { ...base, suppressed: true, responseCount: null, questions: [] };
  const questions = context.survey.questions.flatMap((question, position) => {
    if (question.type !== 'nps' && question.type !== 'rating') return [];
    const value = (histogram: Histogram | undefined) => (!histogram ? null : question.type === 'nps' ? npsOf(histogram).score : meanOf(histogram));
    const now = value(current.get(position));
    const before = value(previous.whole.histograms.get(position));
    const decimals = question.type === 'nps' ? 1 : 2;
    return [{
      questionId: question.id,
      metric: question.type === 'nps' ? ('nps' as const) : ('mean' as const),
      current: now === null ? null : round(now, decimals),
      previous: before === null ? null : round(before, decimals),
      change: now === null || before === null ? null : round(now - before, decimals),
    }];
  });
  return { ...base, suppressed: false, responseCount: previous.whole.responses, questions };
}

export async function getSmartAnalytics(db: Db, tenant: Tenant, surveyId: string, request: SmartRequest): Promise<SmartAnalytics> {
  const segmentBy = request.segmentBy ?? 'department';
  const segment = parseSegment(segmentBy)!;
  const context = await contextOf(db, tenant, surveyId, request, segment);
  const { survey, threshold, scope } = context;
  const questions = survey.questions;
  const outcome = outcomeOrThrow(questions, request.outcomeQuestionId);
  const metric = request.heatmapMetric ?? 'mean';
  const [measured, drivers, participation] = await Promise.all([
    measureScope(db, scope, threshold),
    driverAnalysis(db, { ...scope, segment: undefined }, questions, outcome, threshold),
    participationOf(db, context),
  ]);
  const columns = questions.flatMap((question, position) => (question.type === 'nps' || question.type === 'rating' ? [{ question, position }] : []));
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
  const segments = measured.groups.map((group): SmartSegment => {
    if (group.suppressed) return { value: group.value, responseCount: null, suppressed: true, nps: null, averageRating: null };
    const score = npsPosition < 0 ? null : npsOf(group.histograms.get(npsPosition) ?? new Map()).score;
    return {
      value: group.value,
      responseCount: group.responses,
      suppressed: false,
      nps: score === null ? null : round(score, 1),
      averageRating: ratingAverage(questions, group.histograms),
    };
  });
  const decimals = metric === 'mean' ? 2 : 1;
  const overall = columns.map(({ question, position }) => scoreOf(question, measured.whole.histograms.get(position), metric));
  const heatmap: Heatmap = {
    metric,
    questions: columns.map(({ question }, i) => ({
      questionId: question.id,
      text: question.text,
      type: question.type as 'nps' | 'rating',
      overall: overall[i] === null ? null : round(overall[i]!, decimals),
    })),
    rows: measured.groups.map((group) => ({
      value: group.value,
      suppressed: group.suppressed,
      cells: columns.map(({ question, position }, i) => {
        const score = group.suppressed ? null : scoreOf(question, group.histograms.get(position), metric);
        const whole = overall[i] ?? null;
        return {
          questionId: question.id,
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
    comparison: await comparisonOf(db, context, request, measured.whole.histograms),
  };
}

export async function getSettings(db: Db, tenant: Tenant): Promise<components['schemas']['AnalyticsSettings']> {
  const { threshold, updatedAt } = await repository.findThreshold(db, tenant);
  return { anonymityThreshold: threshold, updatedAt: updatedAt === null ? null : iso(updatedAt) };
}

export async function updateSettings(db: Db, tenant: Tenant, body: components['schemas']['AnalyticsSettingsUpdate']): Promise<components['schemas']['AnalyticsSettings']> {
  if (body.anonymityThreshold === undefined) return getSettings(db, tenant);
  const saved = await repository.saveThreshold(db, tenant, body.anonymityThreshold);
  return { anonymityThreshold: saved.threshold, updatedAt: iso(saved.updatedAt) };
}
