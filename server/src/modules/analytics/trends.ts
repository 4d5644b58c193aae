/**
 * Cycles: a question followed by its `key` across the tenant's launched surveys. Trends list each survey's figures
 * for the keyed question; `compareTo=previousCycle` compares a survey's keyed questions with the most recent
 * earlier survey that asked them. Every figure is measured exactly as static analytics measure the whole survey
 * (`measureScope` over the same counts, the same threshold rule), so a trend point and the static report agree.
 */
import type {
  Question,
  QuestionTrendPoint as TrendPoint,
  SmartAnalyticsComparison as Comparison,
} from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { validationFailed } from '../../http/index.js';
import { iso } from '../../lib/time.js';
import { findPreviousCycle, listLaunchedSurveysWithKey, type CycleSurveyRow } from '../surveys/index.js';
import * as repository from './repository.js';
import type { AnalyticsScope } from './repository.js';
import { measureScope, measureWholeSurveys, type Context, type Measured } from './core.js';
import { auditShown } from './release-gate.js';
import { ANSWERED_MARK, favourableShareOf, type Histogram, meanOf, npsOf, questionStats, round } from './statistics.js';
import { resultSuppressed } from './suppression.js';

const DAY = 86_400_000;

/** A `YYYY-MM-DD` the validator let through, as the UTC midnight it names; an impossible day (02-30) is a 400. */
function dayOrThrow(text: string, name: string): Date {
  const day = new Date(`${text}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text) {
    throw validationFailed([{ path: `/query/${name}`, message: `"${text}" is not a calendar day`, code: 'format' }]);
  }
  return day;
}

/** The rule of `contextOf`: respondents are counted apart from responses only where one may answer again. */
const distinctRespondents = (survey: CycleSurveyRow) =>
  survey.settings.allowMultipleResponses && !survey.settings.anonymous;

/** A cycle's whole survey, measured as static analytics measure it without narrowing (optionally filtered). */
function measureCycle(
  db: Db,
  tenant: Tenant,
  survey: CycleSurveyRow,
  threshold: number,
  filter?: AnalyticsScope['filter'],
): Promise<Measured> {
  const scope: AnalyticsScope = {
    tenant,
    surveyId: survey.id,
    filter,
    distinctRespondents: distinctRespondents(survey),
    snapshots: false,
  };
  return measureScope(db, scope, threshold);
}

function trendPoint(
  survey: CycleSurveyRow,
  key: string,
  measured: Measured,
  threshold: number,
  withheld: boolean,
): TrendPoint {
  const position = survey.questions.findIndex((question) => question.key === key);
  const question = survey.questions[position]!;
  const metric: TrendPoint['metric'] = question.type === 'nps' ? 'nps' : question.type === 'rating' ? 'mean' : null;
  const base = {
    surveyId: survey.id,
    title: survey.title,
    status: survey.status as TrendPoint['status'],
    launchedAt: iso(survey.first_launched_at)!,
    closedAt: iso(survey.closed_at),
    questionId: question.id,
    questionType: question.type,
    metric,
  };
  if (withheld || resultSuppressed(measured.whole.respondents, threshold)) {
    return { ...base, suppressed: true, responseCount: null, answeredCount: null, score: null, favourableShare: null };
  }
  const histogram = measured.whole.histograms.get(position);
  // The static report's own figures for the question, so that the two cannot round apart.
  const stats = questionStats(question, histogram);
  const score = stats.type === 'nps' ? stats.score : stats.type === 'rating' ? stats.average : null;
  const favourable = metric === null || !histogram ? null : favourableShareOf(histogram, question);
  return {
    ...base,
    suppressed: false,
    responseCount: measured.whole.responses,
    // Number answers are not in cells, only their "answered" mark is (their figures come from the answers).
    answeredCount: question.type === 'number' ? (histogram?.get(ANSWERED_MARK) ?? 0) : stats.answeredCount,
    score,
    favourableShare: favourable === null ? null : round(favourable, 1),
  };
}

export async function listQuestionTrends(
  db: Db,
  tenant: Tenant,
  request: { questionKey: string; from?: string; to?: string; limit: number; offset: number },
): Promise<{ points: TrendPoint[]; total: number }> {
  const from = request.from === undefined ? undefined : dayOrThrow(request.from, 'from');
  const to = request.to === undefined ? undefined : dayOrThrow(request.to, 'to');
  if (from && to && to < from) {
    throw validationFailed([{ path: '/query/to', message: 'must not be earlier than from', code: 'out_of_range' }]);
  }
  const [{ rows, total }, { threshold }] = await Promise.all([
    listLaunchedSurveysWithKey(db, tenant, request.questionKey, {
      launchedFrom: from,
      // `to` names a whole day: launches until the next midnight.
      launchedBefore: to && new Date(to.getTime() + DAY),
      limit: request.limit,
      offset: request.offset,
    }),
    repository.findThreshold(db, tenant),
  ]);
  const measured = await measureWholeSurveys(
    db,
    tenant,
    rows.map((survey) => ({ id: survey.id, distinctRespondents: distinctRespondents(survey) })),
    threshold,
  );
  // Each point is its survey's whole result, released through that survey's audit like static analytics'.
  const withheld = await Promise.all(
    rows.map((survey) => wholeWithheld(db, { tenant, surveyId: survey.id }, measured.get(survey.id)!, threshold)),
  );
  return {
    points: rows.map((survey, i) =>
      trendPoint(survey, request.questionKey, measured.get(survey.id)!, threshold, withheld[i]!),
    ),
    total,
  };
}

/**
 * Whether the audit of released results withholds a whole result about to be shown (a response that came or went
 * since it was measured withholds it too); not asked for one the threshold hides.
 */
async function wholeWithheld(
  db: Db,
  scope: Pick<AnalyticsScope, 'tenant' | 'surveyId' | 'filter'>,
  measured: Measured,
  threshold: number,
): Promise<boolean> {
  if (resultSuppressed(measured.whole.respondents, threshold)) return false;
  const full: AnalyticsScope = { ...scope, distinctRespondents: false, snapshots: false };
  const audited = await auditShown(db, full, threshold, new Map([['whole', measured.whole.responses]]));
  return audited.withheld.size > 0;
}

/** The figure a comparison shows: the NPS of an `nps` question, the mean of a `rating` one. */
function comparedValue(question: Question, histogram: Histogram | undefined): number | null {
  if (!histogram) return null;
  return question.type === 'nps' ? npsOf(histogram).score : meanOf(histogram);
}

/** Whether two questions' figures compare: the same type, and for ratings the same scale. */
function comparable(current: Question, previous: Question): boolean {
  if (current.type === 'rating' && previous.type === 'rating')
    return current.min === previous.min && current.max === previous.max;
  return current.type === previous.type;
}

/**
 * `compareTo=previousCycle`: each keyed `nps` and `rating` question of the survey against the question of the same
 * key in the previous cycle (`findPreviousCycle`), whose whole survey is narrowed by the same respondent filter
 * (the window and distribution are this survey's, so they do not carry over) and is subject to the threshold.
 */
export async function previousCycleComparison(
  db: Db,
  context: Context,
  current: Map<number, Histogram>,
): Promise<Comparison> {
  const { survey, scope, threshold } = context;
  const keyed = survey.questions.flatMap((question, position) =>
    (question.type === 'nps' || question.type === 'rating') && question.key ? [{ question, position }] : [],
  );
  if (keyed.length === 0) return null;
  const previous = await findPreviousCycle(
    db,
    scope.tenant,
    { id: survey.id, launchedAt: survey.first_launched_at ?? new Date() },
    keyed.map(({ question }) => question.key!),
  );
  if (!previous) return null;
  const measured = await measureCycle(db, scope.tenant, previous, threshold, scope.filter);
  const base = {
    basis: 'previous_cycle' as const,
    distributionId: null,
    surveyId: previous.id,
    submittedAfter: null,
    submittedBefore: null,
  };
  const withheld = await wholeWithheld(
    db,
    { tenant: scope.tenant, surveyId: previous.id, filter: scope.filter },
    measured,
    threshold,
  );
  if (withheld || resultSuppressed(measured.whole.respondents, threshold))
    return { ...base, suppressed: true, responseCount: null, questions: [] };
  const questions = keyed.map(({ question, position }) => {
    const at = previous.questions.findIndex((q) => q.key === question.key && comparable(question, q));
    const decimals = question.type === 'nps' ? 1 : 2;
    const now = comparedValue(question, current.get(position));
    const before = at < 0 ? null : comparedValue(question, measured.whole.histograms.get(at));
    return {
      questionId: question.id,
      key: question.key!,
      previousQuestionId: at < 0 ? null : previous.questions[at]!.id,
      metric: question.type === 'nps' ? ('nps' as const) : ('mean' as const),
      current: now === null ? null : round(now, decimals),
      previous: before === null ? null : round(before, decimals),
      change: now === null || before === null ? null : round(now - before, decimals),
    };
  });
  return { ...base, suppressed: false, responseCount: measured.whole.responses, questions };
}
