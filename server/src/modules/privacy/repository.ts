/**
 * All SQL of the privacy module. Every query names the tenant (`tenantIs`, or a join on the tenant columns), so on
 * Citus each one runs on the tenant's shard; the clean-up is the only query across tenants.
 *
 * Two kinds of statements live here besides the requests' own. Reads of what other modules keep about a person
 * (respondents, recipients, responses, events…): an erasure must see every copy, and reading is not writing a fact
 * twice. And the writes an erasure alone makes — deleting recipient rows, scrubbing event payloads, clearing
 * delivery excerpts, rewriting AI results and sync errors: no other code writes those facts. Deleting a respondent,
 * a response or an export file, and forgetting a response's respondent, go through their modules' own writers
 * (erase.ts).
 */
import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import { profileSelect, type ProfileRow } from '../respondents/index.js';
import type { Db, DbOrTx } from '../../db/database.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { Inventory, PrivacyRequestsTable, PrivacyRequestStatus, WebhookRecipient } from './tables.js';

export type RequestRow = Selectable<PrivacyRequestsTable>;

/** How long an access file is kept, and how long a request is. */
export const FILE_RETENTION = '7 days';
export const REQUEST_RETENTION = '3 years';

// ---------------------------------------------------------------------------------------------------------------
// The requests

export interface NewRequest {
  id: string;
  type: RequestRow['type'];
  scope: RequestRow['scope'];
  dryRun: boolean;
  subjectKind: RequestRow['subject_kind'];
  subjectValue: string;
  salt: Buffer;
  fingerprint: string;
}

export function insertRequest(db: DbOrTx, tenant: Tenant, r: NewRequest): Promise<RequestRow> {
  return db
    .insertInto('privacy_requests')
    .values({
      ...tenantColumns(tenant),
      id: r.id,
      type: r.type,
      scope: r.scope,
      dry_run: r.dryRun,
      status: 'pending',
      subject_kind: r.subjectKind,
      subject_value: r.subjectValue,
      subject_salt: r.salt,
      subject_hash: r.fingerprint,
      error: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findRequest(db: DbOrTx, tenant: Tenant, id: string): Promise<RequestRow | undefined> {
  return db.selectFrom('privacy_requests').selectAll().where(tenantIs(tenant)).where('id', '=', id).executeTakeFirst();
}

/** The request, its row locked until the caller's transaction ends: a run and a late duplicate take turns. */
export function lockRequest(tx: DbOrTx, tenant: Tenant, id: string): Promise<RequestRow | undefined> {
  return tx
    .selectFrom('privacy_requests')
    .selectAll()
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function listRequests(
  db: DbOrTx,
  tenant: Tenant,
  filter: { type?: RequestRow['type']; status?: PrivacyRequestStatus; limit: number; offset: number },
): Promise<{ rows: RequestRow[]; total: number }> {
  let query = db.selectFrom('privacy_requests').where(tenantIs(tenant));
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.status) query = query.where('status', '=', filter.status);
  const [rows, count] = await Promise.all([
    query
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/**
 * Counts a run and marks the request `processing`. The first start time is set by a statement of its own: Citus
 * refuses a clock function inside COALESCE in a distributed update.
 */
export async function beginRun(db: DbOrTx, tenant: Tenant, id: string): Promise<RequestRow | undefined> {
  await db
    .updateTable('privacy_requests')
    .set({ started_at: sql`now()` })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .where('started_at', 'is', null)
    .execute();
  return db
    .updateTable('privacy_requests')
    .set((eb) => ({ status: 'processing', attempts: eb('attempts', '+', 1) }))
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

/** Completes the run `attempt` (only if it is still the current one), forgetting the subject's identifier. */
export function completeRequest(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  attempt: number,
  outcome: { inventory: Inventory; webhookRecipients: WebhookRecipient[]; fileSize: number | null },
): Promise<RequestRow | undefined> {
  return db
    .updateTable('privacy_requests')
    .set({
      status: 'completed',
      subject_value: null,
      inventory: JSON.stringify(outcome.inventory),
      webhook_recipients: JSON.stringify(outcome.webhookRecipients),
      file_size: outcome.fileSize,
      completed_at: sql`now()`,
      file_expires_at: outcome.fileSize === null ? null : sql<Date>`now() + ${FILE_RETENTION}::interval`,
    })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('attempts', '=', attempt)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
}

/** Fails an unfinished request, forgetting the subject's identifier; nothing it would have changed was changed. */
export function failRequest(db: DbOrTx, tenant: Tenant, id: string, error: string): Promise<RequestRow | undefined> {
  return db
    .updateTable('privacy_requests')
    .set({ status: 'failed', subject_value: null, error: error.slice(0, 1000), completed_at: sql`now()` })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

export async function insertFile(db: DbOrTx, tenant: Tenant, requestId: string, data: Buffer): Promise<void> {
  await db
    .insertInto('privacy_request_files')
    .values({ ...tenantColumns(tenant), request_id: requestId, data })
    .execute();
}

/** Bytes [from, from + length) of an access file (0-based). */
export async function readFileSlice(
  db: DbOrTx,
  tenant: Tenant,
  requestId: string,
  from: number,
  length: number,
): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('privacy_request_files')
    .select(sql<Buffer>`substring(data from ${from + 1} for ${length})`.as('part'))
    .where(tenantIs(tenant))
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  return row?.part;
}

/** The clean-up: access files past their 7 days, requests past their 3 years (their files go with them). */
export async function deleteExpired(db: Db): Promise<{ files: number; requests: number }> {
  const job = acrossTenants(db, "the privacy.cleanup job expires every tenant's access files and old requests");
  const expired = await job
    .updateTable('privacy_requests')
    .set({ file_deleted_at: sql`now()` })
    .where('file_expires_at', '<=', sql<Date>`now()`)
    .where('file_deleted_at', 'is', null)
    .returning(['organization_id', 'environment', 'id'])
    .execute();
  for (const e of expired) {
    await db
      .deleteFrom('privacy_request_files')
      .where(tenantIs({ organizationId: e.organization_id, environment: e.environment }))
      .where('request_id', '=', e.id)
      .execute();
  }
  const requests = await job
    .deleteFrom('privacy_requests')
    .where('created_at', '<', sql<Date>`now() - ${REQUEST_RETENTION}::interval`)
    .where('status', 'in', ['completed', 'failed'])
    .executeTakeFirst();
  return { files: expired.length, requests: Number(requests.numDeletedRows) };
}

// ---------------------------------------------------------------------------------------------------------------
// What the service holds about a person: reads

/** The respondents the subject names: by id, or every record, recipient snapshot and SCIM user with the address. */
export async function externalIdsWithEmail(db: DbOrTx, tenant: Tenant, email: string): Promise<string[]> {
  // Three plain statements rather than a UNION: each is one table's rows of one tenant, which Citus routes as is.
  const respondents = await sql<{ external_id: string }>`
    select external_id from respondents where ${tenantIs(tenant)} and lower(email) = ${email}`.execute(db);
  const recipients = await sql<{ external_id: string }>`
    select distinct external_id from distribution_recipients where ${tenantIs(tenant)} and lower(email) = ${email}`.execute(
    db,
  );
  const users = await sql<{ external_id: string }>`
    select external_id from scim_users where ${tenantIs(tenant)}
      and exists (select 1 from jsonb_array_elements(emails) e where lower(e ->> 'value') = ${email})`.execute(db);
  const ids = new Set([...respondents.rows, ...recipients.rows, ...users.rows].map((r) => r.external_id));
  return [...ids].sort();
}

export interface RespondentRow extends ProfileRow {
  organization_id: string;
  environment: Tenant['environment'];
  external_id: string;
  email: string | null;
  language: string | null;
  content_hash: string;
  created_at: Date;
  updated_at: Date;
}

export async function respondentsOf(db: DbOrTx, tenant: Tenant, ids: readonly string[]): Promise<RespondentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<RespondentRow>`
    select organization_id, environment, external_id, email, ${profileSelect()}, language, content_hash, created_at,
      updated_at
    from respondents where ${tenantIs(tenant)} and external_id = any(${[...ids]}::text[])
    order by external_id`.execute(db);
  return rows;
}

export interface ScimUserRow {
  id: string;
  external_id: string;
  user_name: string;
  active: boolean;
  emails: { value: string; type?: string; primary: boolean; display?: string }[];
  employee_number: string | null;
  preferred_language: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function scimUsersOf(db: DbOrTx, tenant: Tenant, ids: readonly string[]): Promise<ScimUserRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<ScimUserRow>`
    select id, external_id, user_name, active, emails, employee_number, preferred_language, created_at, updated_at
    from scim_users where ${tenantIs(tenant)} and external_id = any(${[...ids]}::text[])
    order by external_id`.execute(db);
  return rows;
}

export interface SurveyInfo {
  id: string;
  title: string;
  settings: { privacy?: 'identified' | 'confidential' | 'anonymous'; anonymous?: boolean };
  questions: QuestionInfo[];
}

export interface QuestionInfo {
  id: string;
  type: string;
  text: string;
  choices?: { id: string; label: string }[] | null;
}

/** The tenant's surveys: a few hundred rows read by the tenant-led key. */
export async function surveysOf(db: DbOrTx, tenant: Tenant): Promise<SurveyInfo[]> {
  const { rows } = await sql<SurveyInfo>`
    select id, title, settings, questions from surveys where ${tenantIs(tenant)} order by id`.execute(db);
  return rows;
}

/** The title and questions of the survey versions responses answered (a launched survey's strings may change). */
export async function surveyVersions(
  db: DbOrTx,
  tenant: Tenant,
  wanted: readonly { surveyId: string; version: number }[],
): Promise<{ survey_id: string; version: number; title: string; questions: QuestionInfo[] }[]> {
  if (wanted.length === 0) return [];
  const keys = new Set(wanted.map((w) => `${w.surveyId}:${w.version}`));
  const { rows } = await sql<{ survey_id: string; version: number; title: string; questions: QuestionInfo[] }>`
    select survey_id, version, title, questions from survey_versions
    where ${tenantIs(tenant)} and survey_id = any(${[...new Set(wanted.map((w) => w.surveyId))]}::text[])
      and version = any(${[...new Set(wanted.map((w) => w.version))]}::int[])`.execute(db);
  return rows.filter((r) => keys.has(`${r.survey_id}:${r.version}`));
}

export interface ResponseRow {
  id: string;
  survey_id: string;
  respondent_external_id: string;
  answers: { questionId: string; value: unknown; other?: string }[];
  submitted_at: Date;
  survey_version: number | null;
  language: string | null;
  distribution_id: string | null;
}

/**
 * The responses that name one of these respondents. `survey_id = any(…)` lets the tenant-led index
 * `responses_by_respondent (organization, environment, survey, respondent)` serve the lookup survey by survey.
 */
export async function responsesOf(
  db: DbOrTx,
  tenant: Tenant,
  surveyIds: readonly string[],
  ids: readonly string[],
): Promise<ResponseRow[]> {
  if (surveyIds.length === 0 || ids.length === 0) return [];
  const { rows } = await sql<ResponseRow>`
    select id, survey_id, respondent_external_id, answers, submitted_at, survey_version, language, distribution_id
    from responses
    where ${tenantIs(tenant)} and survey_id = any(${[...surveyIds]}::text[])
      and respondent_external_id = any(${[...ids]}::text[])
    order by submitted_at, id`.execute(db);
  return rows;
}

export interface RecipientRow extends ProfileRow {
  distribution_id: string;
  survey_id: string;
  external_id: string;
  method: string;
  status: string;
  email: string | null;
  language: string | null;
  sent_at: Date | null;
  responded_at: Date | null;
  reminder_sent_at: Date | null;
  kiosk_code: boolean;
}

/** The recipient rows (snapshots at each send) of these respondents, with their distribution's method. */
export async function recipientsOf(
  db: DbOrTx,
  tenant: Tenant,
  surveyIds: readonly string[],
  ids: readonly string[],
): Promise<RecipientRow[]> {
  if (surveyIds.length === 0 || ids.length === 0) return [];
  const { rows } = await sql<RecipientRow>`
    select dr.distribution_id, dr.survey_id, dr.external_id, d.method, dr.status, dr.email, ${profileSelect('dr')},
      dr.language, dr.sent_at, dr.responded_at, dr.reminder_sent_at,
      dr.access_code_hash is not null as kiosk_code
    from distribution_recipients dr
    join distributions d on d.organization_id = dr.organization_id and d.environment = dr.environment
      and d.id = dr.distribution_id
    where ${tenantIs(tenant, 'dr')} and dr.survey_id = any(${[...surveyIds]}::text[])
      and dr.external_id = any(${[...ids]}::text[])
    order by dr.sent_at nulls last, dr.distribution_id, dr.external_id`.execute(db);
  return rows;
}

export async function countAnalyticsCopies(
  db: DbOrTx,
  tenant: Tenant,
  responses: readonly { id: string; survey_id: string }[],
): Promise<number> {
  if (responses.length === 0) return 0;
  // Response ids are unique, so the two lists name exactly these copies (and the key's prefix serves them).
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from analytics_responses
    where ${tenantIs(tenant)} and survey_id = any(${[...new Set(responses.map((r) => r.survey_id))]}::text[])
      and response_id = any(${responses.map((r) => r.id)}::text[])`.execute(db);
  return rows[0]?.n ?? 0;
}

export interface EventRow {
  id: string;
  type: string;
  data: unknown;
}

/**
 * The events that may hold the person's data, for scrub.ts to decide: `response.submitted` naming them or
 * carrying one of their responses, sync results whose errors name them, and AI results of surveys they answered.
 * Read by the tenant-led `events_by_type` index, one type at a time.
 */
export async function candidateEvents(
  db: DbOrTx,
  tenant: Tenant,
  who: { externalIds: readonly string[]; responseIds: readonly string[]; surveyIds: readonly string[] },
): Promise<EventRow[]> {
  const ids = [...who.externalIds];
  const submitted = await sql<EventRow>`
    select id, type, data from events
    where ${tenantIs(tenant)} and type = 'response.submitted'
      and (data ->> 'respondentExternalId' = any(${ids}::text[]) or data ->> 'id' = any(${[...who.responseIds]}::text[]))`.execute(
    db,
  );
  const synced = await sql<EventRow>`
    select id, type, data from events
    where ${tenantIs(tenant)} and type in ('respondents.sync.completed', 'respondents.sync.failed')
      and jsonb_path_exists(data, '$.errors[*].externalId ? (@ == $ids[*])', jsonb_build_object('ids', to_jsonb(${ids}::text[])))`.execute(
    db,
  );
  const analysed = await sql<EventRow>`
    select id, type, data from events
    where ${tenantIs(tenant)} and type = 'analytics.ai.completed'
      and data ->> 'surveyId' = any(${[...who.surveyIds]}::text[])`.execute(db);
  return [...submitted.rows, ...synced.rows, ...analysed.rows].sort((a, b) => a.id.localeCompare(b.id));
}

/** The delivery attempts of these events, per webhook: how many, and how many were made (not merely queued). */
export async function deliveriesOf(
  db: DbOrTx,
  tenant: Tenant,
  eventIds: readonly string[],
): Promise<{ total: number; recipients: WebhookRecipient[] }> {
  if (eventIds.length === 0) return { total: 0, recipients: [] };
  const { rows } = await sql<{ webhook_id: string; url: string; total: number; attempted: number }>`
    select d.webhook_id, w.url, count(*)::int as total,
      (count(*) filter (where d.status <> 'pending' or d.lease_until is not null))::int as attempted
    from webhook_deliveries d
    join webhooks w on w.organization_id = d.organization_id and w.environment = d.environment and w.id = d.webhook_id
    where ${tenantIs(tenant, 'd')} and d.event_id = any(${[...eventIds]}::text[])
    group by d.webhook_id, w.url
    order by d.webhook_id`.execute(db);
  return {
    total: rows.reduce((sum, r) => sum + r.total, 0),
    recipients: rows
      .filter((r) => r.attempted > 0)
      .map((r) => ({ webhookId: r.webhook_id, url: r.url, deliveries: r.attempted })),
  };
}

export interface AnalysisRow {
  id: string;
  survey_id: string;
  result: unknown;
}

/** The completed AI analyses of these surveys (their results may quote or list the person's responses). */
export async function analysesOf(db: DbOrTx, tenant: Tenant, surveyIds: readonly string[]): Promise<AnalysisRow[]> {
  if (surveyIds.length === 0) return [];
  const { rows } = await sql<AnalysisRow>`
    select id, survey_id, result from ai_analyses
    where ${tenantIs(tenant)} and survey_id = any(${[...surveyIds]}::text[]) and result is not null
    order by id`.execute(db);
  return rows;
}

export interface SyncJobRow {
  id: string;
  errors: { externalId: string | null }[];
}

/** The sync jobs whose record errors name one of these respondents. */
export async function syncJobsNaming(db: DbOrTx, tenant: Tenant, ids: readonly string[]): Promise<SyncJobRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<SyncJobRow>`
    select id, errors from sync_jobs
    where ${tenantIs(tenant)}
      and jsonb_path_exists(errors, '$[*].externalId ? (@ == $ids[*])', jsonb_build_object('ids', to_jsonb(${[...ids]}::text[])))
    order by id`.execute(db);
  return rows;
}

export async function unsubscribesOf(
  db: DbOrTx,
  tenant: Tenant,
  emails: readonly string[],
): Promise<{ email_lower: string; created_at: Date }[]> {
  if (emails.length === 0) return [];
  return db
    .selectFrom('unsubscribes')
    .select(['email_lower', 'created_at'])
    .where(tenantIs(tenant))
    .where('email_lower', '=', sql<string>`any(${[...emails]}::text[])`)
    .orderBy('email_lower')
    .execute();
}

/** The completed access requests (not this one) whose file is still stored, with what identifies their subject. */
export async function storedAccessFiles(
  db: DbOrTx,
  tenant: Tenant,
  except: string,
): Promise<{ id: string; subject_kind: RequestRow['subject_kind']; subject_salt: Buffer; subject_hash: string }[]> {
  return db
    .selectFrom('privacy_requests')
    .select(['id', 'subject_kind', 'subject_salt', 'subject_hash'])
    .where(tenantIs(tenant))
    .where('type', '=', 'access')
    .where('status', '=', 'completed')
    .where('file_size', 'is not', null)
    .where('file_deleted_at', 'is', null)
    .where('id', '<>', except)
    .orderBy('id')
    .execute();
}

// ---------------------------------------------------------------------------------------------------------------
// What only an erasure writes

export async function deleteRecipients(
  db: DbOrTx,
  tenant: Tenant,
  rows: readonly { distribution_id: string; external_id: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  // Every pair of the two lists is one of the person's rows: the ids are all theirs, and every distribution
  // reached them.
  await db
    .deleteFrom('distribution_recipients')
    .where(tenantIs(tenant))
    .where('distribution_id', '=', sql<string>`any(${[...new Set(rows.map((r) => r.distribution_id))]}::text[])`)
    .where('external_id', '=', sql<string>`any(${[...new Set(rows.map((r) => r.external_id))]}::text[])`)
    .execute();
}

/** Deletes events (their deliveries go with them: the foreign key cascades). */
export async function deleteEvents(db: DbOrTx, tenant: Tenant, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .deleteFrom('events')
    .where(tenantIs(tenant))
    .where('id', '=', sql<string>`any(${[...ids]}::text[])`)
    .execute();
}

/** Replaces an event's payload; its deliveries, which send the payload as it is when they run, follow. */
export async function replaceEventData(db: DbOrTx, tenant: Tenant, id: string, data: unknown): Promise<void> {
  await sql`update events set data = ${JSON.stringify(data)}::jsonb where ${tenantIs(tenant)} and id = ${id}`.execute(
    db,
  );
}

/** Clears what the endpoints answered to these events' deliveries: an echoing endpoint answers with the payload. */
export async function clearDeliveryExcerpts(db: DbOrTx, tenant: Tenant, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ response_excerpt: null })
    .where(tenantIs(tenant))
    .where('event_id', '=', sql<string>`any(${[...eventIds]}::text[])`)
    .where('response_excerpt', 'is not', null)
    .execute();
}

export async function replaceAnalysisResult(db: DbOrTx, tenant: Tenant, id: string, result: unknown): Promise<void> {
  await sql`update ai_analyses set result = ${JSON.stringify(result)}::jsonb
    where ${tenantIs(tenant)} and id = ${id}`.execute(db);
}

export async function replaceSyncErrors(db: DbOrTx, tenant: Tenant, id: string, errors: unknown): Promise<void> {
  await sql`update sync_jobs set errors = ${JSON.stringify(errors)}::jsonb
    where ${tenantIs(tenant)} and id = ${id}`.execute(db);
}

/** Deletes earlier access files about the erased person; their downloads answer 410 `export_erased`. */
export async function eraseAccessFiles(
  db: DbOrTx,
  tenant: Tenant,
  requestIds: readonly string[],
  erasureId: string,
): Promise<void> {
  if (requestIds.length === 0) return;
  const ids = sql<string>`any(${[...requestIds]}::text[])`;
  await db
    .updateTable('privacy_requests')
    .set({ file_deleted_at: sql`now()`, file_erased_at: sql`now()`, file_erased_by: erasureId })
    .where(tenantIs(tenant))
    .where('id', '=', ids)
    .execute();
  await db.deleteFrom('privacy_request_files').where(tenantIs(tenant)).where('request_id', '=', ids).execute();
}
