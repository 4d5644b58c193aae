/**
 * The rules of a survey's responses and the mapping of their rows to the contract's `Response`: submitting (with
 * the caches that keep a busy survey's submissions off its row), reading, and THE deletion. Handlers and other
 * modules call these; these call the repositories and own the transactions.
 */
import type { Response, ResponseSubmit } from '../../generated/openapi.js';
import { onCitus } from '../../db/citus.js';
import type { Db, DbOrTx } from '../../db/database.js';
import {
  ApiError,
  idOrNotFound,
  invalidState,
  notFound,
  validationFailed,
  type ErrorDetail,
} from '../../http/index.js';
import { isId, newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { validateAnswers } from './answers.js';
import { showsIdentity, type SurveySettings } from './questions.js';
import * as surveys from './repository.js';
import type { Tenant } from '../../db/tenant.js';
import type { SurveyRow } from './repository.js';
import * as responses from './responses-repository.js';
import type { ResponseRow } from './responses-repository.js';
import { findSurveyOrThrow, surveyIdOrThrow } from './service.js';
import { listedLanguage, offeredLanguages } from './translations.js';

/** A response as the contract shows it; a confidential survey's keep their respondent unseen. */
export function toResponse(row: ResponseRow, settings: SurveySettings): Response {
  return {
    id: row.id,
    surveyId: row.survey_id,
    respondentExternalId: showsIdentity(settings) ? row.respondent_external_id : null,
    answers: row.answers,
    submittedAt: iso(row.submitted_at),
    distributionId: row.distribution_id,
    // Responses stored before surveys had versions answered the only one there was.
    surveyVersion: row.survey_version ?? 1,
    language: row.language,
  };
}

/**
 * Questions and settings of launched surveys, per process. Settings freeze at the first launch and questions only
 * grow after it, so answers that a cached copy accepts are valid under the current version too (the submission's
 * statement still checks that the survey is active, and still exists). Answers a cached copy refuses are checked
 * again against the survey as it is now: another process may have added the question or choice they use.
 */
// A language removed after the launch may still be accepted by another process's cached copy for a while: the
// response then records a language the survey offered moments before, which is what its respondent saw.
// Process-global: one copy per survey for all of a process's requests, whatever their channel. A stale copy is safe
// (above), so nothing invalidates one: a refused submission reads the survey again and replaces its copy, and the
// oldest copy goes when 10,000 are kept.
const frozenSurveys = new Map<string, Pick<SurveyRow, 'questions' | 'settings' | 'languages'>>();
const frozenSurveysMax = 10_000;

async function frozenSurvey(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  options: { fresh?: boolean } = {},
): Promise<Pick<SurveyRow, 'questions' | 'settings' | 'languages'> & { cached: boolean }> {
  const key = `${tenant.organizationId}:${tenant.environment}:${surveyId}`;
  const cached = options.fresh ? undefined : frozenSurveys.get(key);
  if (cached) return { ...cached, cached: true };
  const survey = await findSurveyOrThrow(db, tenant, surveyId);
  if (survey.status !== 'active')
    throw invalidState(`Survey ${surveyId} is ${survey.status}; responses are accepted only while it is active.`);
  if (survey.first_launched_at) {
    if (frozenSurveys.size >= frozenSurveysMax) frozenSurveys.delete(frozenSurveys.keys().next().value!);
    frozenSurveys.set(key, { questions: survey.questions, settings: survey.settings, languages: survey.languages });
  }
  return { ...survey, cached: false };
}

/**
 * Reading a survey's count sums its unfolded deltas; the fold job runs every minute, and a busy survey is also
 * folded by the process that appended many of its deltas, so a read never sums more than a few thousand.
 */
// Process-global: the deltas this process appended per survey, over all its requests. A fold from here resets the
// survey's count, and the whole map is forgotten at 10,000 surveys (the fold job still folds them every minute).
const appendedSinceFold = new Map<string, number>();
const foldEvery = 500;

function foldWhenMany(db: Db, tenant: Tenant, surveyId: string): void {
  const key = `${tenant.organizationId}:${tenant.environment}:${surveyId}`;
  const appended = (appendedSinceFold.get(key) ?? 0) + 1;
  if (appended < foldEvery) {
    if (appendedSinceFold.size >= 10_000) appendedSinceFold.clear(); // only an optimisation: forgetting is safe
    appendedSinceFold.set(key, appended);
    return;
  }
  appendedSinceFold.delete(key);
  // Off the request path; a failed fold only leaves the deltas for the next one. On Citus the sweep would be a
  // command on every shard, so there the fold job's sweep (once a minute) and autovacuum remove the dead rows.
  void (async () => {
    await surveys.foldResponseCounts(db, { tenant, surveyId });
    if (!(await onCitus(db))) await surveys.sweepResponseCounts(db);
  })().catch(() => {});
}

export async function submitResponse(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  body: ResponseSubmit,
): Promise<Response> {
  let survey = await frozenSurvey(db, tenant, surveyId);
  let problems: ErrorDetail[] = submissionChecks(survey, body);
  if (problems.length > 0 && survey.cached) {
    survey = await frozenSurvey(db, tenant, surveyId, { fresh: true });
    problems = submissionChecks(survey, body);
  }
  if (problems.length > 0) throw validationFailed(problems);
  const language = body.language === undefined ? null : (listedLanguage(survey.languages, body.language) ?? null);

  const { anonymous, allowMultipleResponses } = survey.settings;
  const respondentExternalId = anonymous ? null : (body.respondentExternalId ?? null);
  const identityShown = showsIdentity(survey.settings);
  const submittedAt = new Date();
  // What the caller and the event see: a confidential survey stores its respondent but never shows it.
  const response: Response = {
    id: newId('rsp'),
    surveyId,
    respondentExternalId: identityShown ? respondentExternalId : null,
    answers: body.answers,
    submittedAt: iso(submittedAt),
    distributionId: null,
    // The statement records the version it is accepted under, in the row and in the event.
    surveyVersion: 1,
    language,
  };
  const stored = await responses.storeResponse(
    db,
    tenant,
    {
      id: response.id,
      surveyId,
      respondentExternalId,
      dedupeKey: allowMultipleResponses ? null : respondentExternalId,
      answers: body.answers,
      submittedAt,
      language,
      identityShown,
    },
    { id: newId('evt'), type: 'response.submitted', data: response },
  );
  if (stored.outcome === 'stored') {
    foldWhenMany(db, tenant, surveyId);
    return { ...response, distributionId: stored.distributionId, surveyVersion: stored.surveyVersion };
  }
  if (stored.outcome === 'duplicate') {
    throw new ApiError(
      409,
      'duplicate_response',
      `Respondent ${respondentExternalId} has already answered survey ${surveyId}, which allows one response each.`,
    );
  }
  // Paused, closed or deleted since it was read: say which.
  const now = await findSurveyOrThrow(db, tenant, surveyId);
  throw invalidState(`Survey ${surveyId} is ${now.status}; responses are accepted only while it is active.`);
}

/** The answers' problems, and a `language` the survey does not offer. */
function submissionChecks(survey: Pick<SurveyRow, 'questions' | 'languages'>, body: ResponseSubmit): ErrorDetail[] {
  const problems = validateAnswers(survey.questions, body.answers);
  if (body.language !== undefined && !listedLanguage(survey.languages, body.language))
    problems.push({
      path: '/body/language',
      code: 'not_found',
      message: `the survey is not offered in ${body.language} (its languages: ${offeredLanguages(survey.languages)})`,
    });
  return problems;
}

export async function deleteResponse(db: Db, tenant: Tenant, surveyIdParam: string, id: string): Promise<void> {
  const surveyId = surveyIdOrThrow(surveyIdParam);
  idOrNotFound('rsp', 'response', id);
  const deleted = await db.transaction().execute((trx) => removeResponse(trx, tenant, surveyId, id));
  if (!deleted) throw notFound('response', id);
}

/**
 * THE deletion of responses of one survey, in the caller's transaction: the rows and one negative count delta; the
 * triggers of `responses` remove their analytics copies (with their counts) and list them for exports' deletions
 * lists. `deleteResponse`, an erasure (privacy module) and a retention run all delete through here. How many of
 * `ids` there were (and are gone now).
 */
export async function removeResponses(
  trx: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  ids: readonly string[],
): Promise<number> {
  const deleted = await responses.deleteResponses(trx, tenant, surveyId, ids);
  if (deleted > 0) await surveys.countResponse(trx, tenant, surveyId, -deleted);
  return deleted;
}

/** One response: false when there was no such response. */
export async function removeResponse(trx: DbOrTx, tenant: Tenant, surveyId: string, id: string): Promise<boolean> {
  return (await removeResponses(trx, tenant, surveyId, [id])) === 1;
}

/** A survey's responses in a submission-time window (`submittedBefore` must be later than `submittedAfter`). */
export async function listResponses(
  db: Db,
  tenant: Tenant,
  surveyIdParam: string,
  filter: {
    submittedAfter?: string;
    submittedBefore?: string;
    respondentExternalId?: string;
    limit: number;
    offset: number;
  },
): Promise<{ responses: Response[]; total: number }> {
  const surveyId = surveyIdOrThrow(surveyIdParam);
  const submittedAfter = filter.submittedAfter === undefined ? undefined : new Date(filter.submittedAfter);
  const submittedBefore = filter.submittedBefore === undefined ? undefined : new Date(filter.submittedBefore);
  if (submittedAfter && submittedBefore && submittedBefore <= submittedAfter) {
    throw validationFailed([
      { path: '/query/submittedBefore', message: 'must be later than submittedAfter', code: 'out_of_range' },
    ]);
  }
  const survey = await findSurveyOrThrow(db, tenant, surveyId);
  // Looking a respondent up would show which responses are theirs.
  if (filter.respondentExternalId !== undefined && !showsIdentity(survey.settings)) return { responses: [], total: 0 };
  const { rows, total } = await responses.listResponses(db, tenant, surveyId, {
    submittedAfter,
    submittedBefore,
    respondentExternalId: filter.respondentExternalId,
    limit: filter.limit,
    offset: filter.offset,
  });
  return { responses: rows.map((row) => toResponse(row, survey.settings)), total };
}

export async function getResponse(
  db: Db,
  tenant: Tenant,
  surveyIdParam: string,
  responseId: string,
): Promise<Response> {
  const surveyId = surveyIdOrThrow(surveyIdParam);
  idOrNotFound('rsp', 'response', responseId);
  const [survey, row] = await Promise.all([
    findSurveyOrThrow(db, tenant, surveyId),
    responses.findResponse(db, tenant, surveyId, responseId),
  ]);
  if (!row) throw notFound('response', responseId);
  return toResponse(row, survey.settings);
}

/**
 * The answer checks of a submission, for a request that also breaks the schema (so that one 400 lists every
 * problem). Tolerant of a malformed body: only well-formed answers are checked.
 */
export async function submissionProblems(
  db: Db,
  tenant: Tenant,
  surveyIdParam: unknown,
  body: unknown,
): Promise<ErrorDetail[]> {
  const surveyId = typeof surveyIdParam === 'string' && isId('srv', surveyIdParam) ? surveyIdParam : undefined;
  const answers = (body as { answers?: unknown } | undefined)?.answers;
  if (!surveyId || !Array.isArray(answers)) return [];
  const survey = await surveys.findSurvey(db, tenant, surveyId);
  if (!survey) return [];
  const wellFormed = answers.filter(
    (answer): answer is { questionId: string; value: unknown } =>
      typeof answer === 'object' && answer !== null && typeof answer.questionId === 'string',
  );
  return wellFormed.length === answers.length ? validateAnswers(survey.questions, wellFormed as never) : [];
}
