/**
 * A survey's translations: writing, reading and deleting them (each change after the first launch is a version of
 * the survey), and the checks of a write that the schema cannot express. The rules they apply are in
 * translations.ts; these call the repositories and own the transactions.
 */
import type { SurveyTranslation } from '../../generated/openapi.js';
import type { Db, DbOrTx } from '../../db/database.js';
import { ApiError, invalidState, notFound, validationFailed, type ErrorDetail } from '../../http/index.js';
import { isId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import * as surveys from './repository.js';
import type { Tenant } from '../../db/tenant.js';
import type { SurveyRow } from './repository.js';
import { findSurveyOrThrow, surveyIdOrThrow } from './service.js';
import {
  listedLanguage,
  missingStrings,
  offeredLanguages,
  translationProblems,
  type TranslationInput,
} from './translations.js';
import * as translations from './translations-repository.js';
import type { TranslationRow } from './translations-repository.js';

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
