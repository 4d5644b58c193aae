/**
 * The rules of surveys and responses, and the mapping of rows to the contract's objects. Handlers call these;
 * these call the repositories and own the transactions.
 */
import type { components } from '../../generated/openapi.js';
import { onCitus } from '../../db/citus.js';
import type { Db, DbOrTx } from '../../db/database.js';
import {
  idOrNotFound,
  ApiError,
  invalidState,
  notFound,
  validationFailed,
  type ErrorDetail,
} from '../../http/errors.js';
import { isId, newId } from '../../lib/ids.js';
import type { JsonText } from '../../lib/json-text.js';
import { recordEvent } from '../events/index.js';
import { iso } from '../../lib/time.js';
import { validateAnswers } from './answers.js';
import {
  changesAfterLaunch,
  defaultSettings,
  mergeSettings,
  normaliseQuestions,
  settingsProblems,
  showsIdentity,
  sameQuestions,
  type QuestionInput,
  type SurveySettings,
} from './questions.js';
import * as surveys from './repository.js';
import type { Tenant } from '../../db/tenant.js';
import type { SurveyRow, SurveyVersionRow, Transition } from './repository.js';
import * as responses from './responses-repository.js';
import type { ResponseRow } from './responses-repository.js';
import {
  listedLanguage,
  missingStrings,
  offeredLanguages,
  repeatedLanguage,
  translationProblems,
  type TranslationInput,
} from './translations.js';
import * as translations from './translations-repository.js';
import type { TranslationRow } from './translations-repository.js';

type Survey = components['schemas']['Survey'];
type SurveyCreate = components['schemas']['SurveyCreate'];
type SurveyUpdate = components['schemas']['SurveyUpdate'];
type Response = components['schemas']['Response'];
type ResponseSubmit = components['schemas']['ResponseSubmit'];
type SurveyVersion = components['schemas']['SurveyVersion'];
type SurveyTranslation = components['schemas']['SurveyTranslation'];

export function toSurvey(row: SurveyRow): Survey {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    status: row.status,
    questions: row.questions,
    settings: row.settings,
    responseCount: row.response_count,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    launchedAt: iso(row.first_launched_at),
    pausedAt: iso(row.paused_at),
    closedAt: iso(row.closed_at),
    version: row.version,
    languages: row.languages,
  };
}

/** The survey as it was in one of its versions: that version's words and questions, the current state. */
function asVersion(row: SurveyRow, version: SurveyVersionRow): Survey {
  return {
    ...toSurvey(row),
    title: version.title,
    description: version.description,
    questions: version.questions,
    version: version.version,
  };
}

const toSurveyVersion = (row: SurveyVersionRow): SurveyVersion => ({
  version: row.version,
  title: row.title,
  description: row.description,
  questions: row.questions,
  createdAt: iso(row.created_at),
});

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

function normalisedOrThrow(input: SurveyCreate['questions'], reservedIds?: ReadonlySet<string>) {
  const { questions, problems } = normaliseQuestions(input ?? [], '/body/questions', reservedIds);
  if (problems.length > 0) throw validationFailed(problems);
  return questions;
}

/** A language list that names each language once (the schema's `uniqueItems` tells `de` from `DE`). */
function languagesOrThrow(languages: string[]): string[] {
  const repeated = repeatedLanguage(languages);
  if (repeated >= 0)
    throw validationFailed([
      {
        path: `/body/languages/${repeated}`,
        code: 'duplicate',
        message: `${languages[repeated]} is listed twice (language tags compare without regard to case)`,
      },
    ]);
  return languages;
}

/** Settings whose `privacy` and `anonymous` disagree are refused. */
function settingsOrThrow(base: SurveySettings, input: SurveyCreate['settings']): SurveySettings {
  const problems = settingsProblems(input);
  if (problems.length > 0) throw validationFailed(problems);
  return mergeSettings(base, input);
}

/** Each field of `next` that differs from `current`, as the detail of a refused change after launch. */
function settingsChanges(current: SurveySettings, next: SurveySettings): ErrorDetail[] {
  return (Object.keys(next) as (keyof SurveySettings)[])
    .filter((field) => next[field] !== current[field])
    .map((field) => ({
      path: `/body/settings/${field}`,
      code: 'invalid_value',
      message: `must stay ${JSON.stringify(current[field])}: settings freeze at the first launch`,
    }));
}

export async function createSurvey(db: Db, tenant: Tenant, body: SurveyCreate): Promise<Survey> {
  const questions = normalisedOrThrow(body.questions);
  const settings = settingsOrThrow(defaultSettings, body.settings);
  const row = await surveys.insertSurvey(db, tenant, {
    id: newId('srv'),
    title: body.title,
    description: body.description ?? null,
    questions,
    settings,
    languages: languagesOrThrow(body.languages ?? ['en']),
  });
  return toSurvey(row);
}

/** `onPrivacyChanged`: run in the update's transaction when the survey's `privacy` changes (its audit entry). */
export async function updateSurvey(
  db: Db,
  tenant: Tenant,
  id: string,
  body: SurveyUpdate,
  onPrivacyChanged?: (trx: Db) => Promise<void>,
): Promise<Survey> {
  // Checked before the transaction, so that a malformed list is a 400 without a lock; normalised again inside.
  if (body.questions !== undefined) normalisedOrThrow(body.questions);
  if (body.languages !== undefined) languagesOrThrow(body.languages);
  if (body.settings !== undefined) settingsOrThrow(defaultSettings, body.settings);
  // A survey sent back as GET returned it carries the members the server sets, which are ignored; its id must be
  // this survey's, or the client is writing one survey's content over another's.
  if (body.id !== undefined && body.id !== id) {
    throw validationFailed([{ path: '/body/id', code: 'invalid_value', message: `must be ${id}, the survey updated` }]);
  }
  // The row lock orders this update with a concurrent launch, another update and the submissions (which read the
  // survey's version under a shared lock): each version number is given once, and a response records the version
  // whose questions it was checked against.
  const row = await db.transaction().execute(async (trx) => {
    const current = await surveys.findSurvey(trx, tenant, id, { forUpdate: true });
    if (!current) throw notFound('survey', id);
    if (current.status === 'closed') throw invalidState(`Survey ${id} is closed; a closed survey cannot be changed.`);
    const launched = current.first_launched_at !== null;
    const questions =
      body.questions === undefined
        ? undefined
        : normalisedOrThrow(body.questions, launched ? new Set(current.questions.map((q) => q.id)) : undefined);
    const settings = body.settings === undefined ? undefined : mergeSettings(current.settings, body.settings);
    // Settings sent back as they are (a survey read with GET) change nothing; any change is refused.
    const settingsChanged = settings === undefined ? [] : settingsChanges(current.settings, settings);
    if (launched && settingsChanged.length > 0) {
      throw new ApiError(
        409,
        'survey_active',
        `Survey ${id} has been launched; its settings froze at the first launch.`,
        settingsChanged,
      );
    }
    if (questions !== undefined && launched) {
      const problems = changesAfterLaunch(current.questions, questions);
      if (problems.length > 0) {
        throw new ApiError(
          409,
          'survey_active',
          `Survey ${id} has been launched; this change to its questions would change what earlier responses answered.`,
          problems,
        );
      }
    }
    // The default language is the language of the survey's own strings, which earlier responses read.
    if (body.languages !== undefined && launched && body.languages[0] !== current.languages[0]) {
      throw new ApiError(
        409,
        'survey_active',
        `Survey ${id} has been launched; its default language (the first of languages) stays ${current.languages[0]}.`,
        [{ path: '/body/languages/0', code: 'invalid_value', message: `must stay ${current.languages[0]}` }],
      );
    }
    const changed =
      (body.title !== undefined && body.title !== current.title) ||
      (body.description !== undefined && body.description !== current.description) ||
      (questions !== undefined && !sameQuestions(questions, current.questions)) ||
      (body.languages !== undefined && body.languages.join(',') !== current.languages.join(','));
    // After the first launch, each change is a version of its own; a request that changes nothing makes none.
    const version = launched && changed ? (current.version ?? 1) + 1 : undefined;
    const updated = await surveys.updateSurvey(trx, tenant, id, {
      title: body.title,
      description: body.description,
      questions,
      settings: launched ? undefined : settings,
      version,
      languages: body.languages,
    });
    // A language no longer listed takes its translation with it, and so does one that became the default (its
    // strings are now the survey's own).
    if (body.languages !== undefined) await translations.keepTranslations(trx, tenant, id, body.languages.slice(1));
    if (version !== undefined) await surveys.recordVersion(trx, tenant, id, version);
    if (updated && settings !== undefined && settings.privacy !== current.settings.privacy)
      await onPrivacyChanged?.(trx);
    return updated;
  });
  if (!row) throw notFound('survey', id);
  return toSurvey(row);
}

const refusal: Record<Transition, string> = {
  launch: 'only draft (with at least one question) and paused surveys can be launched',
  pause: 'only active surveys can be paused',
  close: 'only active and paused surveys can be closed',
};

const eventOf = { launch: 'survey.launched', pause: 'survey.paused', close: 'survey.closed' } as const;

export async function transitionSurvey(db: Db, tenant: Tenant, id: string, transition: Transition): Promise<Survey> {
  // The change and its event commit together (events/record.ts).
  const changed = await db.transaction().execute(async (tx) => {
    const row = await surveys.transitionSurvey(tx, tenant, id, transition);
    if (!row) return undefined;
    // The first launch is version 1 (a relaunch after a pause finds it kept).
    if (transition === 'launch' && row.version === 1) await surveys.recordVersion(tx, tenant, id, 1);
    const survey = toSurvey(row);
    await recordEvent(tx, tenant, eventOf[transition], survey);
    return survey;
  });
  if (changed) return changed;
  // Refused or absent: read the current state to say which.
  const current = await surveys.findSurvey(db, tenant, id);
  if (!current) throw notFound('survey', id);
  if (transition === 'launch' && current.status === 'draft') {
    throw invalidState(`Survey ${id} is draft and has no questions; add at least one question before launching.`);
  }
  throw invalidState(`Survey ${id} is ${current.status}; ${refusal[transition]}.`);
}

export async function findSurveyOrThrow(db: Db, tenant: Tenant, id: string): Promise<SurveyRow> {
  const row = await surveys.findSurvey(db, tenant, id);
  if (!row) throw notFound('survey', id);
  return row;
}

/**
 * Questions and settings of launched surveys, per process. Settings freeze at the first launch and questions only
 * grow after it, so answers that a cached copy accepts are valid under the current version too (the submission's
 * statement still checks that the survey is active, and still exists). Answers a cached copy refuses are checked
 * again against the survey as it is now: another process may have added the question or choice they use.
 */
// A language removed after the launch may still be accepted by another process's cached copy for a while: the
// response then records a language the survey offered moments before, which is what its respondent saw.
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

export const surveyIdOrThrow = (id: string) => idOrNotFound('srv', 'survey', id);

export async function listSurveys(
  db: Db,
  tenant: Tenant,
  filter: Parameters<typeof surveys.listSurveysJson>[2],
): Promise<{ surveys: JsonText<Survey[]>; total: number }> {
  const { json, total } = await surveys.listSurveysJson(db, tenant, filter);
  return { surveys: json, total };
}

export async function getSurvey(db: Db, tenant: Tenant, id: string, version?: number): Promise<Survey> {
  const row = await findSurveyOrThrow(db, tenant, surveyIdOrThrow(id));
  if (version === undefined) return toSurvey(row);
  const kept = await surveys.findVersion(db, tenant, row.id, version);
  if (!kept) throw new ApiError(404, 'not_found', `Survey ${row.id} has no version ${version}.`);
  return asVersion(row, kept);
}

/** A survey's versions, oldest first (none before its first launch). */
export async function listSurveyVersions(
  db: Db,
  tenant: Tenant,
  id: string,
  page: { limit: number; offset: number },
): Promise<{ versions: SurveyVersion[]; total: number }> {
  const row = await findSurveyOrThrow(db, tenant, surveyIdOrThrow(id));
  const { rows, total } = await surveys.listVersions(db, tenant, row.id, page);
  return { versions: rows.map(toSurveyVersion), total };
}

/** Deletes a survey; its responses go with it (ON DELETE CASCADE). */
export async function deleteSurvey(db: Db, tenant: Tenant, id: string): Promise<string> {
  const row = await surveys.deleteSurvey(db, tenant, surveyIdOrThrow(id));
  if (!row) throw notFound('survey', id);
  return row.id;
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

/**
 * The checks of a survey's questions that the schema cannot express (unique question and choice ids and keys, selection
 * bounds against the choices), for a create or update that also breaks the schema. Tolerant of a malformed body:
 * anything that is not an object, a string id, an array of choices or an integer bound is read as absent.
 */
export function questionProblems(body: unknown): ErrorDetail[] {
  const questions = (body as { questions?: unknown } | undefined)?.questions;
  if (!Array.isArray(questions)) return [];
  return normaliseQuestions(questions.map(asQuestionInput)).problems;
}

function asQuestionInput(value: unknown): QuestionInput {
  const question = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const idOf = (item: unknown) =>
    typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string'
      ? (item as { id: string }).id
      : undefined;
  const bound = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) ? n : undefined);
  const labelled = (items: unknown) =>
    Array.isArray(items) ? items.map((item) => ({ id: idOf(item), label: '', text: '' })) : undefined;
  const choices = labelled(question.choices) ?? [];
  return {
    type: question.type,
    // A matrix's rows and sides, as far as their ids and presence go (the schema reports the rest).
    rows: labelled(question.rows) ?? [],
    scale: typeof question.scale === 'object' && question.scale !== null ? { max: 5 } : undefined,
    columns: labelled(question.columns),
    text: '',
    id: idOf(question),
    key: typeof question.key === 'string' ? question.key : undefined,
    choices,
    minSelections: bound(question.minSelections),
    maxSelections: bound(question.maxSelections),
    allowOther: question.allowOther === true,
    displayIf: readableCondition(question.displayIf),
  } as QuestionInput;
}

/**
 * A display condition whose rules can be checked against the questions (each names a question and an `op`), so
 * that its logic problems are listed even when another part of the body breaks the schema; else none (the schema
 * reports what is wrong with it).
 */
function readableCondition(value: unknown): QuestionInput['displayIf'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Object.entries(value);
  if (entries.length !== 1) return undefined;
  const [kind, rules] = entries[0]!;
  if ((kind !== 'all' && kind !== 'any') || !Array.isArray(rules) || rules.length === 0) return undefined;
  const readable = rules.every(
    (rule: unknown) =>
      typeof rule === 'object' &&
      rule !== null &&
      typeof (rule as { questionId?: unknown }).questionId === 'string' &&
      typeof (rule as { op?: unknown }).op === 'string',
  );
  return readable ? ({ [kind]: rules } as QuestionInput['displayIf']) : undefined;
}

const toTranslation = (survey: SurveyRow, row: TranslationRow): SurveyTranslation => ({
  language: row.language,
  title: row.content.title,
  description: row.content.description ?? null,
  questions: row.content.questions,
  email: row.content.email ?? null,
  missing: missingStrings(survey, row.content),
  updatedAt: iso(row.updated_at),
});

/** The survey's spelling of a language it offers besides its default one, or the 400 that says why not. */
function translatedLanguageOrThrow(survey: SurveyRow, language: string): string {
  const listed = listedLanguage(survey.languages, language);
  if (!listed)
    throw validationFailed([
      {
        path: '/path/language',
        code: 'not_found',
        message: `survey ${survey.id} is not offered in ${language.slice(0, 35)} (its languages: ${offeredLanguages(survey.languages)}); add it to languages first`,
      },
    ]);
  if (listed === survey.languages[0])
    throw validationFailed([
      {
        path: '/path/language',
        code: 'invalid_value',
        message: `${listed} is the survey's default language: its strings are the survey's own (updateSurvey)`,
      },
    ]);
  return listed;
}

/**
 * After the first launch a translation's change is a change of the survey like a rewording: a version of its own
 * (the same rule as `updateSurvey`), made under the survey's row lock so that each number is given once.
 */
async function versionAfterTranslation(trx: DbOrTx, tenant: Tenant, survey: SurveyRow): Promise<void> {
  if (survey.first_launched_at === null) return;
  const version = (survey.version ?? 1) + 1;
  await surveys.updateSurvey(trx, tenant, survey.id, { version });
  await surveys.recordVersion(trx, tenant, survey.id, version);
}

/** Locks the survey for a change of its translations; refuses a closed one. */
async function surveyForTranslation(trx: DbOrTx, tenant: Tenant, id: string): Promise<SurveyRow> {
  const survey = await surveys.findSurvey(trx, tenant, id, { forUpdate: true });
  if (!survey) throw notFound('survey', id);
  return survey;
}

export async function putTranslation(
  db: Db,
  tenant: Tenant,
  idParam: string,
  language: string,
  body: TranslationInput,
): Promise<{ translation: SurveyTranslation; created: boolean }> {
  const id = surveyIdOrThrow(idParam);
  return db.transaction().execute(async (trx) => {
    const survey = await surveyForTranslation(trx, tenant, id);
    const listed = translatedLanguageOrThrow(survey, language);
    const problems = translationProblems(survey.questions, body);
    if (problems.length > 0) throw validationFailed(problems);
    if (survey.status === 'closed') throw invalidState(`Survey ${id} is closed; a closed survey cannot be changed.`);
    const before = await translations.findTranslation(trx, tenant, id, listed);
    const row = await translations.writeTranslation(trx, tenant, id, listed, body);
    if (JSON.stringify(before?.content) !== JSON.stringify(row.content))
      await versionAfterTranslation(trx, tenant, survey);
    return { translation: toTranslation(survey, row), created: before === undefined };
  });
}

export async function getTranslation(
  db: Db,
  tenant: Tenant,
  idParam: string,
  language: string,
): Promise<SurveyTranslation> {
  const survey = await findSurveyOrThrow(db, tenant, surveyIdOrThrow(idParam));
  const listed = listedLanguage(survey.languages, language);
  const row = listed ? await translations.findTranslation(db, tenant, survey.id, listed) : undefined;
  if (!row) throw new ApiError(404, 'not_found', `Survey ${survey.id} has no translation in ${language.slice(0, 35)}.`);
  return toTranslation(survey, row);
}

export async function deleteTranslation(db: Db, tenant: Tenant, idParam: string, language: string): Promise<string> {
  const id = surveyIdOrThrow(idParam);
  return db.transaction().execute(async (trx) => {
    const survey = await surveyForTranslation(trx, tenant, id);
    const listed = listedLanguage(survey.languages, language);
    const exists = listed ? await translations.findTranslation(trx, tenant, id, listed) : undefined;
    if (!listed || !exists)
      throw new ApiError(404, 'not_found', `Survey ${id} has no translation in ${language.slice(0, 35)}.`);
    if (survey.status === 'closed') throw invalidState(`Survey ${id} is closed; a closed survey cannot be changed.`);
    await translations.deleteTranslation(trx, tenant, id, listed);
    await versionAfterTranslation(trx, tenant, survey);
    return listed;
  });
}

/**
 * The survey's translation in `language` (its content), for the respondent's side and exports; undefined for the
 * default language, a language the survey does not list, or one not translated yet.
 */
export async function findTranslationContent(
  db: Db,
  tenant: Tenant,
  survey: Pick<SurveyRow, 'id' | 'languages'>,
  language: string,
): Promise<TranslationInput | undefined> {
  const listed = listedLanguage(survey.languages, language);
  if (!listed || listed === survey.languages[0]) return undefined;
  return (await translations.findTranslation(db, tenant, survey.id, listed))?.content;
}

/**
 * The checks of `upsertSurveyTranslation` that the schema cannot express (the language against the survey's, ids
 * against its questions), for a request the schema refuses too. Tolerant of a malformed body: members that are
 * not objects are read as absent.
 */
export async function translationCheckProblems(
  db: Db,
  tenant: Tenant,
  idParam: unknown,
  languageParam: unknown,
  body: unknown,
): Promise<ErrorDetail[]> {
  const surveyId = typeof idParam === 'string' && isId('srv', idParam) ? idParam : undefined;
  if (!surveyId || typeof languageParam !== 'string') return [];
  const survey = await surveys.findSurvey(db, tenant, surveyId);
  if (!survey) return [];
  const problems: ErrorDetail[] = [];
  try {
    translatedLanguageOrThrow(survey, languageParam);
  } catch (error) {
    if (error instanceof ApiError) problems.push(...(error.details ?? []));
  }
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const given = isObject(body) && isObject(body.questions) ? body.questions : {};
  const questions: TranslationInput['questions'] = {};
  for (const [id, strings] of Object.entries(given)) {
    if (!isObject(strings)) continue;
    const read: TranslationInput['questions'][string] = { text: '' };
    for (const label of ['minLabel', 'maxLabel'] as const) if (typeof strings[label] === 'string') read[label] = '';
    for (const member of ['choices', 'rows', 'columns'] as const) {
      const items = strings[member];
      if (isObject(items)) read[member] = Object.fromEntries(Object.keys(items).map((key) => [key, '']));
    }
    questions[id] = read;
  }
  return [...problems, ...translationProblems(survey.questions, { title: '', questions })];
}
