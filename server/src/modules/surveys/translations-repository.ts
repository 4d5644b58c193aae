/** All SQL on `survey_translations`. Every query is scoped by organization and environment, then by survey. */
import type { Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { SurveyTranslationInput, SurveyTranslationsTable } from './tables.js';

export type TranslationRow = Selectable<SurveyTranslationsTable>;

const ofSurvey = (db: DbOrTx, tenant: Tenant, surveyId: string) =>
  db.selectFrom('survey_translations').where(tenantIs(tenant)).where('survey_id', '=', surveyId);

export function findTranslation(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  language: string,
): Promise<TranslationRow | undefined> {
  return ofSurvey(db, tenant, surveyId).selectAll().where('language', '=', language).executeTakeFirst();
}

/** Creates or replaces the survey's translation in `language`, whole. */
export function writeTranslation(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  language: string,
  content: SurveyTranslationInput,
): Promise<TranslationRow> {
  const now = new Date();
  return db
    .insertInto('survey_translations')
    .values({
      ...tenantColumns(tenant),
      survey_id: surveyId,
      language,
      content: JSON.stringify(content),
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'environment', 'survey_id', 'language'])
        .doUpdateSet({ content: JSON.stringify(content), updated_at: now }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteTranslation(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  language: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('survey_translations')
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('language', '=', language)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Removes the translations of every language but `languages` (none left: all of them). */
export async function keepTranslations(db: DbOrTx, tenant: Tenant, surveyId: string, languages: readonly string[]) {
  let query = db.deleteFrom('survey_translations').where(tenantIs(tenant)).where('survey_id', '=', surveyId);
  if (languages.length > 0) query = query.where('language', 'not in', [...languages]);
  await query.execute();
}
