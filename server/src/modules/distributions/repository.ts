/** All SQL on distributions, their recipients and the unsubscribed addresses. Every query is tenant-scoped. */
import { sql, type NotNull, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { acrossTenants, organizationIs, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import { activeRespondent, profileSelection } from '../respondents/index.js';
import { compileChecked, respondentsOf, type CheckedTargeting } from '../targeting/index.js';
import type { DistributionRecipientsTable, DistributionsTable, RecipientStatus } from './tables.js';
import { accessCodeHashSql, recipientCodeHash } from './access-codes.js';
import { tokenHashSql, type LinkKey } from './tokens.js';

export type DistributionRow = Selectable<DistributionsTable>;
export type RecipientRow = Omit<Selectable<DistributionRecipientsTable>, 'token_hash' | 'access_code_hash'>;

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
    | 'no_email_count'
    | 'reminder_status'
    | 'attempts'
    | 'targeting'
    | 'schedule'
    | 'expires_at'
    | 'matched_count'
    | 'embed_token_hash'
    | 'embed_origins'
    | 'kiosk_prefix'
    | 'started_at'
    | 'completed_at'
    | 'reminder_sent_at'
    | 'failure_reason'
  > & {
    targeting: unknown;
    schedule: Date;
    embed_origins: string[];
    kiosk_prefix?: string | null;
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
  ...profileSelection,
  'language',
  'status',
  'sent_at',
  'responded_at',
  'response_id',
  'reminder_sent_at',
  'error',
  'attempts',
  'access_code_round',
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
 * The audience, matched and frozen in one statement: every respondent the targeting matches now becomes
 * a recipient with a copy of their fields and the hash of their personal token (computed by PostgreSQL).
 * For e-mail, people without an address are recorded as `no_email` and addresses that unsubscribed from the
 * organization as `unsubscribed`: neither is mailed, and both still get a personal link.
 */
export async function freezeAudience(
  db: DbOrTx,
  tenant: Tenant,
  distribution: Pick<DistributionRow, 'id' | 'survey_id' | 'method'>,
  targeting: CheckedTargeting,
  key: LinkKey,
  sentAt: Date,
): Promise<number> {
  const initial =
    distribution.method === 'email'
      ? sql`case when respondents.email is null then 'no_email'
          when ${unsubscribedSql(tenant, sql.ref('respondents.email'))} then 'unsubscribed' else 'pending' end`
      : sql`'sent'`;
  const accessCode =
    distribution.method === 'kiosk'
      ? accessCodeHashSql(key, distribution.id, sql.ref('respondents.external_id'), sql`0`)
      : null;
  const result = await sql<{ n: number }>`
    with inserted as (
      insert into distribution_recipients (organization_id, environment, distribution_id, survey_id, external_id, email,
        first_name, last_name, department, location, job_title, manager_id, hire_date, employment_type, attributes,
        language, token_hash, access_code_hash, status, sent_at)
      select respondents.organization_id, respondents.environment, ${distribution.id}, ${distribution.survey_id},
        respondents.external_id, respondents.email, respondents.first_name, respondents.last_name, respondents.department,
        respondents.location, respondents.job_title, respondents.manager_id, respondents.hire_date, respondents.employment_type,
        respondents.attributes, respondents.language, ${tokenHashSql(key, distribution.id, sql.ref('respondents.external_id'))}, ${accessCode}, ${initial},
        ${distribution.method === 'email' ? null : sentAt}
      from respondents
      where ${tenantIs(tenant, 'respondents')}
        and ${compileChecked(targeting, respondentsOf(tenant))}
        and ${activeRespondent('respondents')}
      returning 1
    )
    select count(*)::int as n from inserted`.execute(db);
  if (distribution.method === 'kiosk') await separateAccessCodes(db, tenant, distribution.id, key);
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
  return (
    db
      .selectFrom('distribution_recipients')
      .select(['external_id', 'email', 'first_name', 'language', 'attempts'])
      .where(tenantIs(tenant))
      .where('distribution_id', '=', distributionId)
      .where('status', '=', 'pending')
      // Pending recipients all have an address (people without one start as `no_email`); this says so to the types.
      .where('email', 'is not', null)
      .$narrowType<{ email: NotNull }>()
      .where('external_id', '>', after)
      .orderBy('external_id')
      .limit(limit)
      .execute()
  );
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
  return (
    db
      .selectFrom('distribution_recipients as r')
      .select(['r.external_id', 'r.email', 'r.first_name', 'r.language', 'r.attempts'])
      .where(tenantIs(tenant, 'r'))
      .where('r.distribution_id', '=', distribution.id)
      .where('r.status', '=', 'sent')
      .where('r.reminder_sent_at', 'is', null)
      // A link or kiosk distribution has no reminder, yet an e-mail one may reach someone whose copy has no address.
      .where('r.email', 'is not', null)
      .$narrowType<{ email: NotNull }>()
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
      .execute()
  );
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

/** A link's lookup (links.ts): the recipient a token hash belongs to. */
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

/** A person without an address has nothing to unsubscribe, so is never unsubscribed. */
export async function isUnsubscribed(db: DbOrTx, tenant: Tenant, email: string | null): Promise<boolean> {
  if (email === null) return false;
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

/**
 * Kiosk codes: recipients of one distribution whose 40 secret bits came out the same (about 1 in 200 audiences of
 * 100,000 has a pair) take the next round of the derivation, the later by external id, until every code of the
 * distribution is its own. Returns how many moved. The new hashes are computed here, not in SQL: Citus refuses an
 * UPDATE whose values call a stable function (`convert_to`) on the row's columns.
 */
export async function separateAccessCodes(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  key: LinkKey,
): Promise<number> {
  let moved = 0;
  for (;;) {
    const { rows } = await sql<{ external_id: string; access_code_round: number }>`
      select ranked.external_id, ranked.access_code_round from (
        select external_id, access_code_round,
          row_number() over (partition by access_code_hash order by external_id) as n
        from distribution_recipients
        where ${tenantIs(tenant)} and distribution_id = ${distributionId} and access_code_hash is not null
      ) ranked
      where ranked.n > 1`.execute(db);
    if (rows.length === 0) return moved;
    const rounds = rows.map((r) => r.access_code_round + 1);
    const hashes = rows.map((r, i) => recipientCodeHash(key, distributionId, r.external_id, rounds[i]!));
    await sql`update distribution_recipients r set access_code_round = v.round, access_code_hash = v.hash
      from unnest(${rows.map((r) => r.external_id)}::text[], ${rounds}::int[], ${hashes}::bytea[])
        as v(external_id, round, hash)
      where ${tenantIs(tenant, 'r')} and r.distribution_id = ${distributionId} and r.external_id = v.external_id`.execute(
      db,
    );
    moved += rows.length;
  }
}

/** Claims `prefix` for a new kiosk distribution; false when another distribution has it. */
export async function claimKioskPrefix(
  db: DbOrTx,
  tenant: Tenant,
  prefix: string,
  distributionId: string,
): Promise<boolean> {
  const row = await db
    .insertInto('kiosk_prefixes')
    .values({ prefix, ...tenantColumns(tenant), distribution_id: distributionId, created_at: new Date() })
    .onConflict((oc) => oc.column('prefix').doNothing())
    .returning('prefix')
    .executeTakeFirst();
  return row !== undefined;
}

/** The tenant and distribution a kiosk code's prefix names, read before the tenant is known. */
export function findKioskPrefix(db: DbOrTx, prefix: string) {
  return acrossTenants(db, "/k: a kiosk code's prefix is what tells its tenant")
    .selectFrom('kiosk_prefixes')
    .select(['organization_id', 'environment', 'distribution_id'])
    .where('prefix', '=', prefix)
    .executeTakeFirst();
}

/** The recipient of a kiosk distribution whose code has this hash. */
export function findRecipientByAccessCode(db: DbOrTx, tenant: Tenant, distributionId: string, codeHash: Buffer) {
  return db
    .selectFrom('distribution_recipients')
    .select(['external_id', 'status'])
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId)
    .where('access_code_hash', '=', codeHash)
    .executeTakeFirst();
}

/** Recipients after `after` by external id (keyset pages, for the CSV of a whole distribution). */
export function recipientsAfter(
  db: DbOrTx,
  tenant: Tenant,
  distributionId: string,
  filter: { status?: RecipientStatus; after: string; limit: number },
): Promise<RecipientRow[]> {
  let query = db
    .selectFrom('distribution_recipients')
    .select(recipientColumns)
    .where(tenantIs(tenant))
    .where('distribution_id', '=', distributionId)
    .where('external_id', '>', filter.after);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query.orderBy('external_id').limit(filter.limit).execute();
}

/**
 * Recipients that answered with these responses no longer point at them (a retention run anonymizing them): they
 * stay `responded`, without the response or its time, as a recipient of an anonymous survey is stored.
 */
export async function forgetResponsesOfRecipients(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  responseIds: readonly string[],
): Promise<number> {
  if (responseIds.length === 0) return 0;
  const result = await db
    .updateTable('distribution_recipients')
    .set({ response_id: null, responded_at: null })
    .where(tenantIs(tenant))
    .where('survey_id', '=', surveyId)
    .where('response_id', '=', sql<string>`any(${[...responseIds]}::text[])`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
