/** All SQL on `responses`. Every query is scoped by survey, organization and environment. */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import type { Answer } from './answers.js';
import type { Tenant } from '../../db/schema.js';
import type { ResponsesTable } from './tables.js';
import { eventSteps, type NewEvent } from '../events/record.js';

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

/**
 * A submission in ONE statement (its own transaction): while the survey is active (a shared lock on its row,
 * so a pause or close waits for submissions in flight, and they for it), the response is stored, counted
 * (an appended delta: no submission waits on another) and its event recorded with its webhook deliveries.
 * Nothing is written when the survey is not active (or not there), nor for a respondent's second answer where
 * one each is allowed: that conflict is not an error, so the statement can run inside a caller's transaction
 * (an idempotent request's) without aborting it.
 */
export async function storeResponse(
  db: DbOrTx,
  tenant: Tenant,
  response: NewResponse & { submittedAt: Date },
  event: NewEvent<'response.submitted'>,
): Promise<'stored' | 'duplicate' | 'inactive'> {
  const { rows } = await sql<{ active: string; stored: string; woken: string }>`
    with active as (
      select id from surveys
      where organization_id = ${tenant.organizationId} and environment = ${tenant.environment} and id = ${response.surveyId} and status = 'active'
      for share
    ), stored as (
      insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at)
      select ${response.id}, active.id, ${tenant.organizationId}, ${tenant.environment}, ${response.respondentExternalId}, ${response.dedupeKey},
        ${JSON.stringify(response.answers)}::jsonb, ${response.submittedAt}
      from active
      on conflict (survey_id, dedupe_key) where dedupe_key is not null do nothing
      returning id
    ), counted as (
      insert into survey_response_counts (organization_id, environment, survey_id, n)
      select ${tenant.organizationId}, ${tenant.environment}, ${response.surveyId}, 1 from stored
    ), ${eventSteps(tenant, event, 'stored')}
    select (select count(*) from active) as active, (select count(*) from stored) as stored, (select count(*) from event_wake) as woken`.execute(db);
  const row = rows[0]!;
  return Number(row.stored) === 1 ? 'stored' : Number(row.active) === 1 ? 'duplicate' : 'inactive';
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
