/** All SQL on `respondents`. Every query is scoped by organization and environment. */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import { profileSelection } from './profile.js';
import { managerLoops, type ManagerLoopError, type ManagerEdgesTurn } from './hierarchy.js';
import type { RespondentRow } from './records.js';
import { followEmailChanges, giveUsersTo, removeUsersOf } from './scim-users.js';
import type { EmploymentType, RespondentsTable, SyncMode } from './tables.js';

export type RespondentRecord = Selectable<RespondentsTable>;

export interface RespondentFilters {
  department?: string;
  location?: string;
  jobTitle?: string;
  employmentType?: EmploymentType;
  managerId?: string;
  email?: string;
  search?: string;
}

// hire_date as text: a `date` must never pass through a JS Date and a time zone.
const columns = [
  'organization_id',
  'environment',
  'external_id',
  'email',
  ...profileSelection,
  'language',
  'content_hash',
  'created_at',
  'updated_at',
] as const;

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export async function listRespondents(
  db: DbOrTx,
  tenant: Tenant,
  filters: RespondentFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: RespondentRecord[]; total: number }> {
  let query = db.selectFrom('respondents').where(tenantIs(tenant));
  if (filters.department !== undefined) query = query.where('department', '=', filters.department);
  if (filters.location !== undefined) query = query.where('location', '=', filters.location);
  if (filters.jobTitle !== undefined) query = query.where('job_title', '=', filters.jobTitle);
  if (filters.employmentType !== undefined) query = query.where('employment_type', '=', filters.employmentType);
  if (filters.managerId !== undefined) query = query.where('manager_id', '=', filters.managerId);
  if (filters.email !== undefined) query = query.where(sql`lower(email)`, '=', filters.email.toLowerCase());
  if (filters.search !== undefined) {
    const pattern = `%${escapeLike(filters.search)}%`;
    query = query.where((eb) =>
      eb.or([eb('first_name', 'ilike', pattern), eb('last_name', 'ilike', pattern), eb('email', 'ilike', pattern)]),
    );
  }
  const [rows, count] = await Promise.all([
    query.select(columns).orderBy('external_id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export async function findRespondent(
  db: DbOrTx,
  tenant: Tenant,
  externalId: string,
): Promise<RespondentRecord | undefined> {
  return db
    .selectFrom('respondents')
    .select(columns)
    .where(tenantIs(tenant))
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

/** Deletes a respondent and its SCIM user (scim-users.ts), together. */
export async function deleteRespondent(db: DbOrTx, tenant: Tenant, externalId: string): Promise<boolean> {
  if (!db.isTransaction) return db.transaction().execute((tx) => deleteRespondent(tx, tenant, externalId));
  const result = await db
    .deleteFrom('respondents')
    .where(tenantIs(tenant))
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) return false;
  await removeUsersOf(db, tenant, sql`external_id = ${externalId}`);
  return true;
}

/**
 * Writes a set of distinct records in one statement (unnest of column arrays). `upsert` and `replace` update a
 * respondent only when its content hash differs, so an unchanged record is neither written nor counted;
 * `append` never touches an existing respondent. `(xmax = 0)` tells an inserted row from an updated one.
 *
 * The one writer of respondents, so the hierarchy's rule is kept here for every caller (hierarchy.ts): a record
 * that would close a loop of managers is not written. `refusals: 'throw'` (one record: PUT, SCIM) throws its
 * `ManagerLoopError`; `'report'` (a sync's batch) writes the others and returns the refused ones. `turn`: a batch
 * of an incremental sync, written beside the job's other batches (`ParallelManagerEdges`).
 */
export async function writeRespondents(
  db: DbOrTx,
  tenant: Tenant,
  rows: readonly RespondentRow[],
  mode: SyncMode,
  refusals: 'throw' | 'report' = 'throw',
  turn?: ManagerEdgesTurn,
  scimUsers: 'here' | 'by caller' = 'here',
): Promise<{ created: number; updated: number; refused: ManagerLoopError[] }> {
  if (rows.length === 0) {
    turn?.skip();
    return { created: 0, updated: 0, refused: [] };
  }
  // The hierarchy's lock lives as long as the transaction: a caller without one gets one.
  if (!db.isTransaction)
    return db.transaction().execute((tx) => writeRespondents(tx, tenant, rows, mode, refusals, turn, scimUsers));
  const loops = await managerLoops(db, tenant, rows, { appendOnly: mode === 'append', lock: true, turn });
  if (loops.size > 0) {
    if (refusals === 'throw') throw loops.values().next().value!;
    rows = rows.filter((row) => !loops.has(row.externalId));
    if (rows.length === 0) return { created: 0, updated: 0, refused: [...loops.values()] };
  }
  const onConflict =
    mode === 'append'
      ? sql`do nothing`
      : sql`do update set
          email = excluded.email, first_name = excluded.first_name, last_name = excluded.last_name,
          department = excluded.department, location = excluded.location, job_title = excluded.job_title,
          manager_id = excluded.manager_id, hire_date = excluded.hire_date, employment_type = excluded.employment_type,
          attributes = excluded.attributes, language = excluded.language, content_hash = excluded.content_hash,
          updated_at = excluded.updated_at
        where respondents.content_hash is distinct from excluded.content_hash`;
  const { rows: written } = await sql<{ external_id: string; email: string | null; inserted: boolean }>`
    insert into respondents (organization_id, environment, external_id, email, first_name, last_name, department,
      location, job_title, manager_id, hire_date, employment_type, attributes, content_hash, language, updated_at)
    -- updated_at travels in the row (excluded.updated_at below): Citus allows no clock function in DO UPDATE.
    select ${tenant.organizationId}, ${tenant.environment}, r.*, now()
    from unnest(${rows.map((r) => r.externalId)}::text[], ${rows.map((r) => r.email)}::text[],
      ${rows.map((r) => r.firstName)}::text[], ${rows.map((r) => r.lastName)}::text[],
      ${rows.map((r) => r.department)}::text[], ${rows.map((r) => r.location)}::text[],
      ${rows.map((r) => r.jobTitle)}::text[], ${rows.map((r) => r.managerId)}::text[],
      ${rows.map((r) => r.hireDate)}::date[], ${rows.map((r) => r.employmentType)}::text[],
      ${rows.map((r) => r.attributesJson)}::jsonb[], ${rows.map((r) => r.contentHash)}::text[],
      ${rows.map((r) => r.language)}::text[]) as r
    on conflict (organization_id, environment, external_id) ${onConflict}
    returning external_id, email, (xmax = 0) as inserted`.execute(db);
  const created = written.filter((row) => row.inserted);
  const updated = written.filter((row) => !row.inserted);
  if (scimUsers === 'here') {
    // A new user's name may be one another batch of the sync is writing: only in this batch's commit turn is
    // none of them open (scim-users.ts).
    await turn?.beforeCommit();
    await giveUsersTo(
      db,
      tenant,
      created.map((row) => ({ externalId: row.external_id, email: row.email })),
    );
    await followEmailChanges(
      db,
      tenant,
      updated.map((row) => row.external_id),
    );
  }
  return { created: created.length, updated: updated.length, refused: [...loops.values()] };
}

/** For a dry run: which of these externalIds exist, with their content hashes. */
export async function existingHashes(
  db: DbOrTx,
  tenant: Tenant,
  externalIds: readonly string[],
): Promise<Map<string, string>> {
  if (externalIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('respondents')
    .select(['external_id', 'content_hash'])
    .where(tenantIs(tenant))
    .where('external_id', '=', sql<string>`any(${[...externalIds]}::text[])`)
    .execute();
  return new Map(rows.map((r) => [r.external_id, r.content_hash]));
}

/**
 * The end of a `replace`: deletes (or, for a dry run, counts) the tenant's respondents whose externalId is not
 * among `kept`, the job's valid externalIds. They travel as one array parameter (PostgreSQL hashes a long
 * `= any(…)` list) rather than through a temporary table, which Citus cannot join with a distributed table.
 */
export async function removeRespondentsNotKept(
  db: DbOrTx,
  tenant: Tenant,
  kept: readonly string[],
  dryRun: boolean,
): Promise<number> {
  const missing = sql`${tenantIs(tenant)} and not (external_id = any(${[...kept]}::text[]))`;
  const result = dryRun
    ? await sql<{ n: number }>`select count(*)::int as n from respondents where ${missing}`.execute(db)
    : await sql<{
        n: number;
      }>`with gone as (delete from respondents where ${missing} returning 1) select count(*)::int as n from gone`.execute(
        db,
      );
  if (!dryRun) await removeUsersOf(db, tenant, sql`not (external_id = any(${[...kept]}::text[]))`);
  return result.rows[0]?.n ?? 0;
}

/**
 * Of `words`, the parts of the tenant's respondents' first and last names (split at spaces and hyphens) that are
 * among them, as stored: the names an AI analysis must redact, found without reading every respondent of a
 * large organization. A part matches a word written the same or its lower case (the caller sends each word in
 * several spellings, so a database whose `lower()` folds ASCII only still finds "Łukasz"); typographic
 * apostrophes count as plain ones.
 */
export async function respondentNamePartsAmong(
  db: DbOrTx,
  tenant: Tenant,
  words: readonly string[],
): Promise<string[]> {
  if (words.length === 0) return [];
  const rows = await sql<{ part: string }>`
    select distinct part
    from respondents r
    cross join lateral regexp_split_to_table(concat_ws(' ', r.first_name, r.last_name), '[[:space:]-]+') as part
    where ${tenantIs(tenant, 'r')}
      and part <> ''
      and (lower(replace(part, '’', '''')) = any(${[...words]}::text[]) or replace(part, '’', '''') = any(${[...words]}::text[]))`.execute(
    db,
  );
  return rows.rows.map((r) => r.part);
}

/** The planner's row estimate for the scans of `respondents` (or of its Citus shards) in an `EXPLAIN (FORMAT JSON)`. */
function estimatedRows(plan: unknown): number | undefined {
  if (Array.isArray(plan)) {
    for (const item of plan) {
      const rows = estimatedRows(item);
      if (rows !== undefined) return rows;
    }
    return undefined;
  }
  if (typeof plan !== 'object' || plan === null) return undefined;
  const node = plan as Record<string, unknown>;
  if (typeof node['Relation Name'] === 'string' && /^respondents(_\d+)?$/.test(node['Relation Name']))
    return typeof node['Plan Rows'] === 'number' ? node['Plan Rows'] : undefined;
  for (const value of Object.values(node)) {
    const rows = estimatedRows(value);
    if (rows !== undefined) return rows;
  }
  return undefined;
}

/**
 * Gives the planner statistics that know the tenant holds at least `rowsHeld` respondents, when its estimate is
 * far below that (a new tenant's first large sync, or a table not analysed since it was small). With an estimate of
 * about one row, the manager-chain walk's key lookups are planned as scans of the whole tenant through a secondary
 * index (all of them lead with the tenant too): 313 ms a batch of 5,000 at 50,000 rows, against 2.8 ms after
 * ANALYZE. Run inside a transaction, ANALYZE also counts that transaction's own uncommitted rows.
 */
export async function analyzeIfTenantUnderestimated(db: DbOrTx, tenant: Tenant, rowsHeld: number): Promise<boolean> {
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`
    explain (format json) select 1 from respondents where ${tenantIs(tenant)}`.execute(db);
  const estimate = estimatedRows(rows[0]?.['QUERY PLAN']);
  if (estimate === undefined || estimate * 10 >= rowsHeld) return false;
  await sql`analyze respondents`.execute(db);
  return true;
}
