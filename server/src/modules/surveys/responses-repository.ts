/** All SQL on `responses`. Every query is scoped by survey, organization and environment. */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import { compiledOnce } from '../../db/compiled-once.js';
import type { DbOrTx } from '../../db/database.js';
import type { Answer } from './answers.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import type { ResponsesTable } from './tables.js';
import { eventSteps, wakeDispatchers, type NewEvent } from '../events/index.js';

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
 * THE writer of responses: every channel stores through this one statement (its own transaction, or a caller's),
 * so a response, its distribution, its recipient's `responded`, its count delta, its analytics copy (the triggers
 * of `responses`, which freeze the respondent's segment fields) and its `response.submitted` event are one fact.
 *
 * - While the survey is active (a shared lock on its row, so a pause, close or change waits for submissions in
 *   flight, and they for it). The response records the survey's version it was accepted under: answers checked
 *   against an earlier version's questions are valid under every later one (a launched survey only grows).
 * - The distribution it answers: the answer page's; for an API submission naming a respondent, the latest
 *   distribution of this survey that reached them (sent, before now), so reports by distribution and the
 *   snapshot rule count it wherever it was rendered.
 * - A personal link answers once: its recipient row is locked, and a link already answered stores nothing
 *   (`used`). The recipient the response answers is marked `responded` in the same statement.
 * - Nothing is written for a respondent's second answer where one each is allowed (`duplicate`): that conflict
 *   is not an error, so the statement can run inside a caller's transaction without aborting it.
 */
export async function storeResponse(
  db: DbOrTx,
  tenant: Tenant,
  response: NewResponse & { submittedAt: Date },
  event: NewEvent<'response.submitted'>,
  channel: ResponseChannel = { kind: 'api' },
): Promise<StoreOutcome> {
  // An answer without identity (an anonymous survey's link) must not be tied back to its recipient: no response
  // id and no time on the recipient row, whose `responded_at` would otherwise equal the response's `submittedAt`.
  const identified = response.respondentExternalId !== null;
  const values: StoreValues = {
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    surveyId: response.surveyId,
    responseId: response.id,
    respondentExternalId: response.respondentExternalId,
    dedupeKey: response.dedupeKey,
    answers: JSON.stringify(response.answers),
    submittedAt: response.submittedAt,
    language: response.language ?? null,
    eventId: event.id,
    eventType: event.type,
    eventData: JSON.stringify(event.data),
    ...(channel.kind === 'api' ? {} : { distributionId: channel.distributionId }),
    ...(channel.kind === 'personal' ? { tokenHash: channel.tokenHash } : {}),
  };
  let statement = storeStatements.get(`${channel.kind}:${identified}`);
  if (!statement) {
    statement = compiledOnce((db: DbOrTx, placeholders: StoreValues) =>
      storeStatement(placeholders, channel.kind, identified).compile(db),
    );
    storeStatements.set(`${channel.kind}:${identified}`, statement);
  }
  const row = (await statement(db, values))[0]!;
  if (Number(row.queued) > 0) await wakeDispatchers(db);
  if (Number(row.stored) === 1)
    return { outcome: 'stored', distributionId: row.distribution_id, surveyVersion: row.survey_version ?? 1 };
  if (Number(row.active) === 0) return { outcome: 'inactive' };
  return { outcome: Number(row.used) === 1 ? 'used' : 'duplicate' };
}

interface StoreValues {
  organizationId: string;
  environment: Tenant['environment'];
  surveyId: string;
  responseId: string;
  respondentExternalId: string | null;
  dedupeKey: string | null;
  answers: string;
  submittedAt: Date;
  language: string | null;
  eventId: string;
  eventType: 'response.submitted';
  eventData: string;
  distributionId?: string;
  tokenHash?: Buffer;
}

/**
 * The statement has one text per channel and identity, built and compiled by Kysely once each (`compiledOnce`):
 * building and compiling it was about a twentieth of the service's CPU per submission.
 */
const storeStatements = new Map<string, ReturnType<typeof compiledOnce<StoreValues, StoreRow>>>();

interface StoreRow {
  active: string;
  stored: string;
  used: string;
  distribution_id: string | null;
  survey_version: number | null;
  queued: string;
}

function storeStatement(v: StoreValues, channel: ResponseChannel['kind'], identified: boolean): RawBuilder<StoreRow> {
  // The tenant's columns of the rows it inserts; every read and update is scoped by tenantIs.
  const tenant: Tenant = { organizationId: v.organizationId, environment: v.environment };
  const org = v.organizationId;
  const env = v.environment;
  const recipient =
    channel === 'personal'
      ? sql`select external_id, status from distribution_recipients
          where ${tenantIs(tenant)} and distribution_id = ${v.distributionId} and token_hash = ${v.tokenHash}
          for update`
      : sql`select null::text as external_id, null::text as status where false`;
  const distribution =
    channel === 'api'
      ? sql`(select dr.distribution_id from distribution_recipients dr
          where ${tenantIs(tenant, 'dr')} and dr.survey_id = ${v.surveyId}
            and dr.external_id = ${v.respondentExternalId} and dr.status in ('sent', 'responded') and dr.sent_at <= ${v.submittedAt}
          order by dr.sent_at desc limit 1)`
      : sql`${v.distributionId}::text`;
  const linkOpen =
    channel === 'personal' ? sql`exists (select 1 from recipient where status <> 'responded')` : sql`true`;
  // The recipient this response answers: the link's own, else the respondent named in the distribution found.
  const answeredBy =
    channel === 'personal' ? sql`(select external_id from recipient)` : sql`${v.respondentExternalId}::text`;
  const eventData = sql`${v.eventData}::jsonb || jsonb_build_object('distributionId', (select distribution_id from stored), 'surveyVersion', (select survey_version from stored))`;
  const event = { id: v.eventId, type: v.eventType } as NewEvent<'response.submitted'>;
  return sql<StoreRow>`
    with active as (
      select id, version from surveys
      where ${tenantIs(tenant)} and id = ${v.surveyId} and status = 'active'
      for share
    ), recipient as (${recipient}
    ), stored as (
      insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at, distribution_id, survey_version, language)
      select ${v.responseId}, active.id, ${org}, ${env}, ${v.respondentExternalId}, ${v.dedupeKey},
        ${v.answers}::jsonb, ${v.submittedAt}, ${distribution}, active.version,
        ${v.language}::text
      from active
      where ${linkOpen}
      on conflict (organization_id, environment, survey_id, dedupe_key) where dedupe_key is not null do nothing
      returning id, distribution_id, survey_version
    ), answered as (
      update distribution_recipients dr set status = 'responded',
        responded_at = ${identified ? sql`${v.submittedAt}` : sql`null`}::timestamptz, response_id = ${identified ? sql`s.id` : sql`null`}
      from stored s
      where ${tenantIs(tenant, 'dr')} and dr.distribution_id = s.distribution_id
        and dr.external_id = ${answeredBy} and dr.status <> 'responded'
    ), counted as (
      insert into survey_response_counts (organization_id, environment, survey_id, n)
      select ${org}, ${env}, ${v.surveyId}, 1 from stored
    ), ${eventSteps(tenant, event, 'stored', eventData)}
    select (select count(*) from active) as active, (select count(*) from stored) as stored,
      (select count(*) from recipient where status = 'responded') as used,
      (select distribution_id from stored) as distribution_id, (select survey_version from stored) as survey_version,
      (select count(*) from event_deliveries) as queued`;
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

export function deleteResponse(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  id: string,
): Promise<{ id: string } | undefined> {
  return db
    .deleteFrom('responses')
    .where('id', '=', id)
    .where('survey_id', '=', surveyId)
    .where(tenantIs(tenant))
    .returning('id')
    .executeTakeFirst();
}
