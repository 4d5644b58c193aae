/**
 * What static and smart analytics and trends share: the request's parameters (window, filters, segment, manager,
 * outcome), the scope and context they make, measuring a scope (the aggregate queries of the repository in
 * parallel, the anonymity rules of suppression.ts, histograms by question) and participation. Static analytics
 * are in static.ts, smart analytics in smart.ts, trends in trends.ts.
 */
import type { Question, SmartAnalytics } from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { notFound, validationFailed } from '../../http/index.js';
import { findDistributionWithPrevious } from '../distributions/index.js';
import { findSurveyOrThrow } from '../surveys/index.js';
import type { SurveyRow } from '../surveys/index.js';
import { compileTargeting, recipientsTarget, type TargetShape } from '../targeting/index.js';
import * as repository from './repository.js';
import type { AnalyticsScope, CellRow, GroupRow, SegmentField } from './repository.js';
import { histogramsByPosition, round, type Histogram } from './statistics.js';
import { orderGroups, suppressedGroups } from './suppression.js';

export interface AnalyticsRequest {
  outcomeQuestionId?: string;
  submittedAfter?: string;
  submittedBefore?: string;
  distributionId?: string;
  segmentBy?: string;
  /** With `segmentBy=managerTree`: the manager whose organization is broken down. */
  manager?: string;
  /** The `filters` query parameter: JSON text of `{ filters, logic }`. */
  filters?: string;
}

/** The respondent of a response as analytics sees it: the subject stored with its typed copy `ar`. */
const subjectTarget: TargetShape = { alias: 'ar' };
const recipientTarget: TargetShape = { ...recipientsTarget, alias: 'dr' };

/**
 * Parses and checks `filters` with the targeting module (the distribution's filter language); every problem is
 * a 400 under /query/filters. Returns the condition over responses' respondents and over recipients.
 */
export function parseFilters(
  text: string | undefined,
): { responses: AnalyticsScope['filter']; recipients: AnalyticsScope['filter'] } | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw validationFailed([
      {
        path: '/query/filters',
        message: 'must be the JSON text of an object { "filters": [...], "logic": "AND" | "OR" }',
        code: 'format',
      },
    ]);
  }
  const unknown = (value: unknown, allowed: string[], at: string) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.keys(value)
          .filter((key) => !allowed.includes(key))
          .map((key) => ({
            path: `${at}/${key}`,
            message: `unknown field "${key.slice(0, 80)}"`,
            code: 'unknown_field',
          }))
      : [];
  const problems = unknown(parsed, ['filters', 'logic'], '/query/filters');
  const filters = (parsed as { filters?: unknown } | null)?.filters;
  if (Array.isArray(filters))
    filters.forEach((filter, i) =>
      problems.push(...unknown(filter, ['field', 'operator', 'value'], `/query/filters/filters/${i}`)),
    );
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
  throw validationFailed([
    { path: '/query/segmentBy', message: `"${segmentBy}" is not a respondent field to group by`, code: 'enum' },
  ]);
}

/** The manager of a `managerTree` breakdown; `manager` belongs to it and to nothing else. */
export function treeManagerOrThrow(request: AnalyticsRequest): string | undefined {
  const tree = request.segmentBy === 'managerTree';
  if (tree === (request.manager !== undefined)) return request.manager;
  throw validationFailed([
    tree
      ? { path: '/query/manager', message: 'segmentBy=managerTree needs manager, an externalId', code: 'required' }
      : { path: '/query/manager', message: 'manager is only used with segmentBy=managerTree', code: 'invalid_value' },
  ]);
}

/** The request's submission window; one that ends before it starts is a 400. */
export function windowOrThrow(request: AnalyticsRequest): { after?: Date; before?: Date } {
  const after = request.submittedAfter === undefined ? undefined : new Date(request.submittedAfter);
  const before = request.submittedBefore === undefined ? undefined : new Date(request.submittedBefore);
  if (after && before && before <= after) {
    throw validationFailed([
      { path: '/query/submittedBefore', message: 'must be later than submittedAfter', code: 'out_of_range' },
    ]);
  }
  return { after, before };
}

export interface Context {
  survey: SurveyRow;
  threshold: number;
  scope: AnalyticsScope;
  /** The recipients' side of the filter (over the snapshot), for participation. */
  recipientFilter: AnalyticsScope['filter'];
  previousDistributionId: string | null;
}

export async function contextOf(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  request: AnalyticsRequest,
  segment: SegmentField | undefined,
): Promise<Context> {
  const window = windowOrThrow(request);
  const filters = parseFilters(request.filters);
  const [survey, { threshold }, snapshots] = await Promise.all([
    findSurveyOrThrow(db, tenant, surveyId),
    repository.findThreshold(db, tenant),
    repository.hasDistributions(db, tenant, surveyId),
  ]);
  let previousDistributionId: string | null = null;
  if (request.distributionId !== undefined) {
    const distribution = await findDistributionWithPrevious(db, tenant, surveyId, request.distributionId);
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
export async function participationOf(db: Db, context: Context): Promise<Participation | undefined> {
  if (!context.scope.snapshots) return undefined;
  const rows = await repository.participation(db, context.scope, context.recipientFilter);
  const whole = rows.find((row) => row.whole) ?? { invited: 0, responded: 0 };
  const groups = rows.filter((row) => !row.whole);
  const hidden = suppressedGroups(
    groups.map((row) => ({ respondents: row.invited, value: row.segment })),
    context.threshold,
  );
  const rate = (responded: number, invited: number) => (invited === 0 ? null : round(responded / invited, 3));
  const segments = orderGroups(
    groups.map((row, index) => ({ ...row, value: row.segment, responses: row.invited, suppressed: hidden.has(index) })),
  ).map((row) =>
    row.suppressed
      ? { value: row.value, suppressed: true, invited: null, responded: null, rate: null }
      : {
          value: row.value,
          suppressed: false,
          invited: row.invited,
          responded: row.responded,
          rate: rate(row.responded, row.invited),
        },
  );
  return {
    invited: whole.invited,
    responded: whole.responded,
    rate: rate(whole.responded, whole.invited),
    segments: context.scope.segment ? segments : [],
  };
}

interface Group {
  value: string | null;
  responses: number;
  respondents: number;
  suppressed: boolean;
  histograms: Map<number, Histogram>;
}

export interface Measured {
  whole: { responses: number; respondents: number; histograms: Map<number, Histogram> };
  groups: Group[];
  days: { date: string; count: number }[];
}

const DAY = 86_400_000;

/** Splits one scan's rows into responses per day (negative codes) and question histograms. */
function summarise(rows: CellRow[]): {
  responses: number;
  days: Map<number, number>;
  histograms: Map<number, Histogram>;
} {
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
    return {
      value,
      summary,
      responses: summary.responses,
      respondents: respondentsOf(value, false, summary.responses),
    };
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
    whole: {
      responses: whole.responses,
      respondents: respondentsOf(null, true, whole.responses),
      histograms: whole.histograms,
    },
    groups: orderGroups(groups),
    days: [...whole.days]
      .sort(([a], [b]) => a - b)
      .map(([day, count]) => ({ date: new Date(day * DAY).toISOString().slice(0, 10), count })),
  };
}

/**
 * The whole result from the exact daily counts and the groups from the exact per-segment counts when they
 * answer the scope (whole UTC days, no filter or distribution, a respondent column or tenure, one response per
 * respondent); otherwise one scan of the typed copy (plus the distinct-respondent count when a survey takes
 * several responses per respondent). `early`: the counts' rows already asked for (see static.ts `countsAhead`).
 */
export async function measureScope(
  db: Db,
  scope: AnalyticsScope,
  threshold: number,
  early?: Promise<CellRow[]>,
): Promise<Measured> {
  const daily = !scope.distinctRespondents && repository.dailyCountsApply({ ...scope, segment: undefined });
  const segments = !scope.distinctRespondents && repository.segmentCountsApply(scope);
  if (early && daily && (!scope.segment || segments)) return measure(await early, threshold);
  const [cells, wholeCells, distinct] = await Promise.all([
    !scope.segment
      ? Promise.resolve([])
      : segments
        ? repository.segmentCellCounts(db, scope)
        : repository.cellCounts(db, scope, { whole: !daily }),
    daily
      ? repository.dailyCellCounts(db, scope)
      : !scope.segment
        ? repository.cellCounts(db, scope)
        : Promise.resolve([]),
    scope.distinctRespondents ? repository.distinctRespondents(db, scope) : Promise.resolve(undefined),
  ]);
  return measure([...wholeCells, ...cells], threshold, distinct);
}

/**
 * `measureScope` of several whole surveys (no window, filter, distribution or segment), as static analytics measure
 * each without parameters: the ones that take one response per respondent from one statement over their daily
 * counts (the rows `measureScope` reads for each), the others (distinct respondents) each by its own scan.
 */
export async function measureWholeSurveys(
  db: Db,
  tenant: Tenant,
  surveys: readonly { id: string; distinctRespondents: boolean }[],
  threshold: number,
): Promise<Map<string, Measured>> {
  const counted = surveys.filter((survey) => !survey.distinctRespondents).map((survey) => survey.id);
  const scanned = surveys.filter((survey) => survey.distinctRespondents);
  const [cells, scans] = await Promise.all([
    repository.dailyCellCountsOfSurveys(db, tenant, counted),
    Promise.all(
      scanned.map((survey) =>
        measureScope(db, { tenant, surveyId: survey.id, distinctRespondents: true, snapshots: false }, threshold),
      ),
    ),
  ]);
  const measured = new Map<string, Measured>();
  for (const [id, rows] of cells) measured.set(id, measure(rows, threshold));
  scanned.forEach((survey, i) => measured.set(survey.id, scans[i]!));
  return measured;
}

export function outcomeOrThrow(questions: Question[], outcomeQuestionId: string | undefined): number | undefined {
  if (outcomeQuestionId === undefined) {
    const first = questions.findIndex((question) => question.type === 'nps');
    return first < 0 ? undefined : first;
  }
  const position = questions.findIndex((question) => question.id === outcomeQuestionId);
  if (position < 0 || (questions[position]!.type !== 'nps' && questions[position]!.type !== 'rating')) {
    throw validationFailed([
      {
        path: '/query/outcomeQuestionId',
        message: `"${outcomeQuestionId}" is not an nps or rating question of this survey`,
        code: 'invalid_value',
      },
    ]);
  }
  return position;
}
