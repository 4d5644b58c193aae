/** All SQL on distributions, their recipients and the unsubscribed addresses. Every query is tenant-scoped. */
import { sql, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { organizationIs, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import { activeRespondent } from '../scim/index.js';
import { compileChecked, respondentsOf, type CheckedTargeting } from '../targeting/index.js';
import type { DistributionRecipientsTable, DistributionsTable, RecipientStatus } from './tables.js';
import { tokenHashSql, type LinkKey } from './tokens.js';

export type DistributionRow = Selectable<DistributionsTable>;
export type RecipientRow = Omit<Selectable<DistributionRecipientsTable>, 'token_hash'>;

export async function insertDistribution(
  db: DbOrTx,
  tenant: Tenant,
  row: Omit<
    DistributionsTable,
    | 'organization_id'
    | 'environment'
    | 'created_at'
    | 'sent_count'
    | 'failed_count'
    | 'unsubscribed_count'
    | 'reminder_status'
    | 'attempts'
    | 'targeting'
    | 'schedule'
    | 'expires_at'
    | 'matched_count'
    | 'embed_token_hash'
    | 'embed_origins'
    | 'started_at'
    | 'completed_at'
    | 'reminder_sent_at'
    | 'failure_reason'
  > & {
    targeting: unknown;
    schedule: Date;
    embed_origins: string[];
  },
): Promise<DistributionRow> {
  return db
    .insertInto('distributions')
    .values({ ...tenantColumns(tenant), ...row, targeting: JSON.stringify(row.targeting), created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findDistribution(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<DistributionRow | undefined> {
  let query = db.selectFrom('distributions').selectAll().where(tenantIs(tenant)).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listDistributions(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  page: { limit: number; offset: number },
) {
  const query = db.selectFrom('distributions').where(tenantIs(tenant)).where('survey_id', '=', surveyId);
  const [rows, total] = await Promise.all([
    query
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export function updateDistribution(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  changes: Omit<Updateable<DistributionsTable>, 'organization_id' | 'environment' | 'id' | 'targeting'>,
) {
  return db
    .updateTable('distributions')
    .set(changes)
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type StatusCounts = Partial<Record<RecipientStatus, number>>;

export async function recipientCounts(db: DbOrTx, tenant: Tenant, distributionId: string): Promise<StatusCounts> {
  const rows = await db
    .selectFrom('distribution_recipients')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, r.count]));
}

const recipientColumns = [
  'organization_id',
  'environment',
  'distribution_id',
  'survey_id',
  'external_id',
  'email',
  'first_name',
  'last_name',
  'department',
  'location',
  'job_title',
  'manager_id',
  sql<string | null>`hire_date::text`.as('hire_date'),
  'employment_type',
  'attributes',
  'language',
  'status',
  'sent_at',
  'responded_at',
  'response_id',
  'reminder_sent_at',
  'error',
  'attempts',
] as const;

export async function listRecipients(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  filter: { status?: RecipientStatus; limit: number; offset: number },
): Promise<{ rows: RecipientRow[]; total: number }> {
  let query = db
    .selectFrom('distribution_recipients')
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId);
  if (filter.status) query = query.where('status', '=', filter.status);
  const [rows, total] = await Promise.all([
    query.select(recipientColumns).orderBy('external_id').limit(filter.limit).offset(filter.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

/**
 * The audience, matched and snapshotted in one statement: every respondent the targeting matches now becomes
 * a recipient with a copy of their fields and the hash of their personal token (computed by PostgreSQL).
 * For e-mail, addresses that unsubscribed from the organization are recorded as `unsubscribed`, not mailed.
 */
export async function snapshotRecipients(
  db: DbOrTx,
  tenant: Tenant,
  distribution: Pick<DistributionRow, 'id' | 'survey_id' | 'method'>,
  targeting: CheckedTargeting,
  key: LinkKey,
  sentAt: Date,
): Promise<number> {
  const initial =
    distribution.method === 'email'
      ? sql`case when ${unsubscribedSql(tenant, sql.ref('respondents.email'))} then 'unsubscribed' else 'pending' end`
      : sql`'sent'`;
  const result = await sql<{ n: number }>`
    with inserted as (
      insert into distribution_recipients (organization_id, environment, distribution_id, survey_id, external_id, email,
        first_name, last_name, department, location, job_title, manager_id, hire_date, employment_type, attributes,
        language, token_hash, status, sent_at)
      select respondents.organization_id, respondents.environment, ${distribution.id}, ${distribution.survey_id},
        respondents.external_id, respondents.email, respondents.first_name, respondents.last_name, respondents.department,
        respondents.location, respondents.job_title, respondents.manager_id, respondents.hire_date, respondents.employment_type,
        respondents.attributes, respondents.language, ${tokenHashSql(key, distribution.id, sql.ref('respondents.external_id'))}, ${initial},
        ${distribution.method === 'email' ? null : sentAt}
      from respondents
      where ${tenantIs(tenant, 'respondents')}
        and ${compileChecked(targeting, respondentsOf(tenant))}
        and ${activeRespondent('respondents')}
      returning 1
    )
    select count(*)::int as n from inserted`.execute(db);
  return result.rows[0]?.n ?? 0;
}

/** Unsubscribes are organization-wide: an address unsubscribed in LIVE or TEST is mailed by neither. */
function unsubscribedSql(tenant: Tenant, email: ReturnType<typeof sql.ref>) {
  return sql<boolean>`exists (select 1 from unsubscribes u where ${organizationIs(tenant, 'u')}
    and u.email_lower = lower(${email}))`;
}

/** Pending recipients whose address unsubscribed meanwhile (another distribution's link) are never mailed. */
export async function skipUnsubscribed(db: DbOrTx, tenant: Tenant, distributionId: string): Promise<number> {
  const result = await db
    .updateTable('distribution_recipients')
    .set({ status: 'unsubscribed' })
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId)
    .where('status', '=', 'pending')
    .where(unsubscribedSql(tenant, sql.ref('distribution_recipients.email')))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface SendTarget {
  external_id: string;
  email: string;
  first_name: string | null;
  language: string | null;
  attempts: number;
}

export function pendingRecipients(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  after: string,
  limit: number,
): Promise<SendTarget[]> {
  return db
    .selectFrom('distribution_recipients')
    .select(['external_id', 'email', 'first_name', 'language', 'attempts'])
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId)
    .where('status', '=', 'pending')
    .where('external_id', '>', after)
    .orderBy('external_id')
    .limit(limit)
    .execute();
}

/**
 * Recipients due a reminder: sent to, not answered (through the link or the API), not unsubscribed since, not made
 * inactive by a SCIM client since.
 */
export function reminderRecipients(
  db: DbOrTx,
  tenant: Tenant,
  distribution: Pick<DistributionRow, 'id' | 'survey_id'>,
  after: string,
  limit: number,
): Promise<SendTarget[]> {
  return db
    .selectFrom('distribution_recipients as r')
    .select(['r.external_id', 'r.email', 'r.first_name', 'r.language', 'r.attempts'])
    .where(tenantIs(tenant, 'r'))
    .where('r.distribution_id', '=', distribution.id)
    .where('r.status', '=', 'sent')
    .where('r.reminder_sent_at', 'is', null)
    .where('r.external_id', '>', after)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('responses as s')
            .select(sql`1`.as('one'))
            .where(tenantIs(tenant, 's'))
            .where('s.survey_id', '=', distribution.survey_id)
            .whereRef('s.respondent_external_id', '=', 'r.external_id'),
        ),
      ),
    )
    .where(sql<boolean>`not ${unsubscribedSql(tenant, sql.ref('r.email'))}`)
    .where(activeRespondent('r'))
    .orderBy('r.external_id')
    .limit(limit)
    .execute();
}

function recipient(db: DbOrTx, tenant: Tenant, distributionId: string, externalId: string) {
  return db
    .updateTable('distribution_recipients')
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId)
    .where('external_id', '=', externalId);
}

export interface Outcome {
  externalId: string;
  status: 'sent' | 'bounced' | 'failed' | 'pending';
  error?: string | null;
  attempts?: number;
}

/**
 * Records the outcomes of several messages: one statement for the sent, one for the rest (only recipients still
 * `pending` change).
 */
export async function recordOutcomes(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  outcomes: readonly Outcome[],
): Promise<void> {
  // The sent ones take the clock, the others keep their time: two statements, since Citus refuses a clock
  // function inside CASE in a distributed update.
  const sent = outcomes.filter((o) => o.status === 'sent');
  const others = outcomes.filter((o) => o.status !== 'sent');
  if (sent.length > 0) await writeOutcomes(db, tenant, distributionId, sent, sql`now()`);
  if (others.length > 0) await writeOutcomes(db, tenant, distributionId, others, sql`r.sent_at`);
}

async function writeOutcomes(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  outcomes: readonly Outcome[],
  sentAt: RawBuilder<unknown>,
): Promise<void> {
  await sql`update distribution_recipients r set status = v.status, sent_at = ${sentAt},
      error = v.error, attempts = coalesce(v.attempts, r.attempts)
    from unnest(${outcomes.map((o) => o.externalId)}::text[], ${outcomes.map((o) => o.status)}::text[],
      ${outcomes.map((o) => o.error ?? null)}::text[], ${outcomes.map((o) => o.attempts ?? null)}::int[]) as v(external_id, status, error, attempts)
    where ${tenantIs(tenant, 'r')}
      and r.distribution_id = ${distributionId} and r.external_id = v.external_id and r.status = 'pending'`.execute(db);
}

export async function recordReminder(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  externalId: string,
): Promise<void> {
  await recipient(db, tenant, distributionId, externalId)
    .set({ reminder_sent_at: new Date() })
    .where('reminder_sent_at', 'is', null)
    .execute();
}

/** The answer page's lookup: the recipient a token hash belongs to, with its distribution. */
export function findRecipientByToken(
  db: DbOrTx,
  tenant: Tenant,
  tokenHash: Buffer,
  options: { forUpdate?: boolean } = {},
) {
  let query = db
    .selectFrom('distribution_recipients')
    .select(recipientColumns)
    .where(tenantIs(tenant))
    .where('token_hash', '=', tokenHash);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function findDistributionByEmbedToken(db: DbOrTx, tenant: Tenant, tokenHash: Buffer) {
  return db
    .selectFrom('distributions')
    .selectAll()
    .where(tenantIs(tenant))
    .where('embed_token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function isUnsubscribed(db: DbOrTx, tenant: Tenant, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('unsubscribes')
    .select('email_lower')
    .where(organizationIs(tenant))
    .where('email_lower', '=', email.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}

export async function unsubscribe(db: DbOrTx, tenant: Tenant, email: string, distributionId: string): Promise<void> {
  await db
    .insertInto('unsubscribes')
    .values({
      ...tenantColumns(tenant),
      email_lower: email.toLowerCase(),
      distribution_id: distributionId,
      created_at: new Date(),
    })
    .onConflict((oc) => oc.columns(['organization_id', 'environment', 'email_lower']).doNothing())
    .execute();
}

/** The distribution if it belongs to the survey, with the one created just before it (for comparisons). */
export async function findDistributionWithPrevious(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  id: string,
): Promise<{ id: string; previousId: string | null } | undefined> {
  const row = await db
    .selectFrom('distributions')
    .select(['id', 'created_at'])
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const previous = await db
    .selectFrom('distributions')
    .select('id')
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', row.created_at),
        eb.and([eb('created_at', '=', row.created_at), eb('id', '<', row.id)]),
      ]),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { id: row.id, previousId: previous?.id ?? null };
}
