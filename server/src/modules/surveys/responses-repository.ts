/** All SQL on `responses`. Every query is scoped by survey, organization and environment. */
import type { Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import type { Answer } from './answers.js';
import type { Tenant } from '../../db/schema.js';
import type { ResponsesTable } from './tables.js';

export type ResponseRow = Selectable<ResponsesTable>;

/** The partial unique index of the migration; a violation of it means "this respondent already answered". */
export const oneResponsePerRespondentIndex = 'responses_one_per_respondent';

export interface NewResponse {
  id: string;
  surveyId: string;
  respondentExternalId: string | null;
  dedupeKey: string | null;
  answers: Answer[];
}

export function insertResponse(db: DbOrTx, tenant: Tenant, response: NewResponse): Promise<ResponseRow> {
  return db
    .insertInto('responses')
    .values({
      id: response.id,
      survey_id: response.surveyId,
      organization_id: tenant.organizationId,
      environment: tenant.environment,
      respondent_external_id: response.respondentExternalId,
      dedupe_key: response.dedupeKey,
      answers: JSON.stringify(response.answers),
      // Millisecond precision, like the API's timestamps, so filters on a shown `submittedAt` match exactly.
      submitted_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

function scoped(db: DbOrTx, tenant: Tenant, surveyId: string) {
  return db
    .selectFrom('responses')
    .where('survey_id', '=', surveyId)
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment);
}

export interface ResponseFilter {
  submittedAfter?: Date;
  submittedBefore?: Date;
  respondentExternalId?: string;
  limit: number;
  offset: number;
}

export async function listResponses(db: DbOrTx, tenant: Tenant, surveyId: string, filter: ResponseFilter) {
  let query = scoped(db, tenant, surveyId);
  if (filter.submittedAfter) query = query.where('submitted_at', '>=', filter.submittedAfter);
  if (filter.submittedBefore) query = query.where('submitted_at', '<', filter.submittedBefore);
  if (filter.respondentExternalId !== undefined) query = query.where('respondent_external_id', '=', filter.respondentExternalId);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('submitted_at', 'desc').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export function findResponse(db: DbOrTx, tenant: Tenant, surveyId: string, id: string): Promise<ResponseRow | undefined> {
  return scoped(db, tenant, surveyId).selectAll().where('id', '=', id).executeTakeFirst();
}

export function deleteResponse(db: DbOrTx, tenant: Tenant, surveyId: string, id: string): Promise<{ id: string } | undefined> {
  return db
    .deleteFrom('responses')
    .where('id', '=', id)
    .where('survey_id', '=', surveyId)
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .returning('id')
    .executeTakeFirst();
}
