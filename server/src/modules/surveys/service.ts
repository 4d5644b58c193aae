/**
 * The rules of surveys, and the mapping of their rows to the contract's objects: create, update, the lifecycle,
 * versions and the question checks. Handlers call these; these call the repositories and own the transactions.
 * A survey's responses are in responses-service.ts, its translations in translations-service.ts.
 */
import type { Survey, SurveyCreate, SurveyUpdate, SurveyVersion } from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import {
  idOrNotFound,
  ApiError,
  invalidState,
  notFound,
  validationFailed,
  type ErrorDetail,
} from '../../http/index.js';
import { newId } from '../../lib/ids.js';
import type { JsonText } from '../../lib/json-text.js';
import { recordEvent } from '../events/index.js';
import { iso } from '../../lib/time.js';
import {
  changesAfterLaunch,
  defaultSettings,
  mergeSettings,
  normaliseQuestions,
  settingsProblems,
  sameQuestions,
  type QuestionInput,
  type SurveySettings,
} from './questions.js';
import * as surveys from './repository.js';
import type { Tenant } from '../../db/tenant.js';
import type { SurveyRow, SurveyVersionRow, Transition } from './repository.js';
import { repeatedLanguage } from './translations.js';
import * as translations from './translations-repository.js';

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
