/** All SQL on `responses`. Every query is scoped by survey, organization and environment. */
import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import type { Answer } from './answers.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import type { ResponsesTable } from './tables.js';
import { wakeDispatchers, type NewEvent } from '../events/index.js';

export type ResponseRow = Selectable<ResponsesTable>;

/** The partial unique index of the migration; a violation of it means "this respondent already answered". */
export const oneResponsePerRespondentIndex = 'responses_one_per_respondent';

export interface NewResponse {
  id: string;
  surveyId: string;
  respondentExternalId: string | null;
  dedupeKey: string | null;
  answers: Answer[];
  /** The language it was answered in, as the survey spells it; null when not known. */
  language?: string | null;
  /**
   * Whether the survey shows who answered (identified): only then does the recipient row record when it was answered
   * and by which response. A confidential survey keeps the respondent on the response (for segments) but not that.
   */
  identityShown: boolean;
}

/** How a response arrives: through the API, or through a distribution's answer page (personal link or embed). */
export type ResponseChannel =
  | { kind: 'api' }
  | { kind: 'personal'; distributionId: string; tokenHash: Buffer }
  | { kind: 'embed'; distributionId: string };

export type StoreOutcome =
  | { outcome: 'stored'; distributionId: string | null; surveyVersion: number }
  | { outcome: 'duplicate' | 'inactive' | 'used' };

/**
 * THE writer of responses: every channel stores through this one call of the SQL function `store_response`
 * (sql/30_store_response.sql; its own transaction, or a caller's), so a response, its distribution, its
 * recipient's `responded`, its count delta, its analytics copy (the triggers of `responses`, which freeze the
 * respondent's segment fields) and its `response.submitted` event are one fact.
 *
 * - While the survey is active (a shared lock on its row, so a pause, close or change waits for submissions in
 *   flight, and they for it). The response records the survey's version it was accepted under: answers checked
 *   against an earlier version's questions are valid under every later one (a launched survey only grows).
 * - The distribution it answers: the answer page's; for an API submission naming a respondent, the latest
 *   distribution of this survey that reached them (sent, before now), so reports by distribution and the
 *   snapshot rule count it wherever it was rendered.
 * - A personal link answers once: its recipient row is locked, and a link already answered stores nothing
 *   (`used`). The recipient the response answers is marked `responded` in the same call.
 * - Nothing is written for a respondent's second answer where one each is allowed (`duplicate`): that conflict
 *   is not an error, so the call can run inside a caller's transaction without aborting it.
 *
 * Made outside a transaction block, the call is one round trip, and on Citus it is delegated whole to the node
 * holding the tenant's shards: no other node takes part, so a submission needs only that node.
 */
export async function storeResponse(
  db: DbOrTx,
  tenant: Tenant,
  response: NewResponse & { submittedAt: Date },
  event: NewEvent<'response.submitted'>,
  channel: ResponseChannel = { kind: 'api' },
): Promise<StoreOutcome> {
  // An answer whose identity is not stored (anonymous) or not shown (confidential) must not be tied back to its
  // recipient: no response id and no time on the recipient row, whose `responded_at` would equal `submittedAt`.
  const identified = response.identityShown && response.respondentExternalId !== null;
  const { rows } = await sql<StoreRow>`
    select active, stored, used, distribution_id, survey_version, queued
    from store_response(${tenant.organizationId}, ${tenant.environment}, ${response.surveyId}, ${response.id},
      ${response.respondentExternalId}, ${response.dedupeKey}, ${JSON.stringify(response.answers)}::jsonb,
      ${response.submittedAt}, ${response.language ?? null}, ${event.id}, ${JSON.stringify(event.data)}::jsonb,
      ${channel.kind}, ${channel.kind === 'api' ? null : channel.distributionId},
      ${channel.kind === 'personal' ? channel.tokenHash : null}, ${identified})`.execute(db);
  const row = rows[0]!;
  if (row.queued > 0) await wakeDispatchers(db);
  if (row.stored === 1)
    return { outcome: 'stored', distributionId: row.distribution_id, surveyVersion: row.survey_version ?? 1 };
  if (row.active === 0) return { outcome: 'inactive' };
  return { outcome: row.used === 1 ? 'used' : 'duplicate' };
}

/** The row `store_response` returns. */
interface StoreRow {
  active: number;
  stored: number;
  used: number;
  distribution_id: string | null;
  survey_version: number | null;
  queued: number;
}

/** The survey's responses, in the tenant. */
function ofSurvey(db: DbOrTx, tenant: Tenant, surveyId: string) {
  return db.selectFrom('responses').where('survey_id', '=', surveyId).where(tenantIs(tenant));
}

export interface ResponseFilter {
  submittedAfter?: Date;
  submittedBefore?: Date;
  respondentExternalId?: string;
  limit: number;
  offset: number;
}

export async function listResponses(db: DbOrTx, tenant: Tenant, surveyId: string, filter: ResponseFilter) {
  let query = ofSurvey(db, tenant, surveyId);
  if (filter.submittedAfter) query = query.where('submitted_at', '>=', filter.submittedAfter);
  if (filter.submittedBefore) query = query.where('submitted_at', '<', filter.submittedBefore);
  if (filter.respondentExternalId !== undefined)
    query = query.where('respondent_external_id', '=', filter.respondentExternalId);
  const [rows, total] = await Promise.all([
    query
      .selectAll()
      .orderBy('submitted_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export function findResponse(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  id: string,
): Promise<ResponseRow | undefined> {
  return ofSurvey(db, tenant, surveyId).selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Keeps responses but forgets who gave them (an erasure of the respondent's identity): no respondent id, and no
 * one-per-respondent key, which is the respondent id too. The update trigger re-reads each row into its analytics
 * copy (same answers, so the same counts) with the respondent id gone; what the copy keeps of its subject is the
 * analytics module's to forget. Returns how many responses changed.
 */
export async function forgetRespondentOfResponses(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('responses')
    .set({ respondent_external_id: null, dedupe_key: null })
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('id', '=', sql<string>`any(${[...ids]}::text[])`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function deleteResponses(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .deleteFrom('responses')
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('id', '=', sql<string>`any(${[...ids]}::text[])`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The responses of one survey a retention rule reaches. To delete (`identifiedOnly` false): those submitted before
 * `submittedBefore`, or all when it is null (the rule counting from the survey's close). To anonymize
 * (`identifiedOnly`): those still naming their respondent, person by person — a person's responses once the latest of
 * them is older than `submittedBefore` — so that one person's answers never count as both a known and a forgotten
 * respondent.
 */
export interface DueResponses {
  surveyId: string;
  submittedBefore: Date | null;
  identifiedOnly: boolean;
}

/** The condition on `responses r` (for the exports' check of which files hold them, too). */
export function dueResponsesCondition(tenant: Tenant, due: DueResponses): RawBuilder<SqlBool> {
  const parts: RawBuilder<unknown>[] = [tenantIs(tenant, 'r'), sql`r.survey_id = ${due.surveyId}`];
  if (!due.identifiedOnly) {
    if (due.submittedBefore) parts.push(sql`r.submitted_at < ${due.submittedBefore}`);
  } else {
    parts.push(sql`r.respondent_external_id is not null`);
    if (due.submittedBefore)
      parts.push(sql`not exists (select 1 from responses later
        where ${tenantIs(tenant, 'later')} and later.survey_id = r.survey_id
          and later.respondent_external_id = r.respondent_external_id and later.submitted_at >= ${due.submittedBefore})`);
  }
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

export async function countDueResponses(db: DbOrTx, tenant: Tenant, due: DueResponses): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from responses r
    where ${dueResponsesCondition(tenant, due)}`.execute(db);
  return Number(rows[0]!.n);
}

/**
 * A batch of them: at most `limit` responses, oldest first, to delete; or every due response of at most `limit`
 * people, to anonymize (a person's responses stay together).
 */
export async function dueResponses(
  db: DbOrTx,
  tenant: Tenant,
  due: DueResponses,
  limit: number,
): Promise<{ id: string; respondent_external_id: string | null }[]> {
  const condition = dueResponsesCondition(tenant, due);
  const { rows } = due.identifiedOnly
    ? await sql<{ id: string; respondent_external_id: string | null }>`
        select r.id, r.respondent_external_id from responses r
        where ${condition} and r.respondent_external_id in (
          select distinct r.respondent_external_id from responses r where ${condition}
          order by r.respondent_external_id limit ${limit})`.execute(db)
    : await sql<{ id: string; respondent_external_id: string | null }>`
        select r.id, r.respondent_external_id from responses r where ${condition}
        order by r.submitted_at, r.id limit ${limit}`.execute(db);
  return rows;
}
