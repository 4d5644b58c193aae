/**
 * All SQL on `scim_users`, and the reads of users joined with their respondents. Every query is scoped by
 * organization and environment (both tables), so each stays on the tenant's shard on Citus. Respondents are read
 * here but never written: the respondents module's writer does that, and gives every respondent it creates its
 * `scim_users` row (respondents/scim-users.ts), unless SCIM writes it here.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import { profileSelect } from '../respondents/index.js';
import type { ScimEmail } from './tables.js';
import type { StoredUser } from './user.js';

const selectUser = (tenant: Tenant) => sql`
  select s.id, s.external_id, s.user_name, s.active, s.preferred_language, s.employee_number, s.emails, s.created_at,
    greatest(s.updated_at, r.updated_at) as last_modified,
    -- The version changes whenever the respondent or the SCIM row does (microseconds of both).
    md5(r.updated_at::text || '|' || s.updated_at::text) as version,
    ${profileSelect('r')}
  from scim_users s
  join respondents r on r.organization_id = s.organization_id and r.environment = s.environment
    and r.external_id = s.external_id
  where ${tenantIs(tenant, 's')} and ${tenantIs(tenant, 'r')}`;

export async function findUser(db: DbOrTx, tenant: Tenant, id: string, lock = false): Promise<StoredUser | undefined> {
  const { rows } =
    await sql<StoredUser>`${selectUser(tenant)} and s.id = ${id} ${lock ? sql`for update of s` : sql``}`.execute(db);
  return rows[0];
}

export async function listUsers(
  db: DbOrTx,
  tenant: Tenant,
  where: RawBuilder<SqlBool>,
  order: RawBuilder<unknown>,
  page: { offset: number; limit: number },
): Promise<{ rows: StoredUser[]; total: number }> {
  const [list, count] = await Promise.all([
    page.limit === 0
      ? Promise.resolve({ rows: [] as StoredUser[] })
      : sql<StoredUser>`${selectUser(tenant)} and ${where} order by ${order} limit ${page.limit} offset ${page.offset}`.execute(
          db,
        ),
    sql<{ total: number }>`select count(*)::int as total from (${selectUser(tenant)} and ${where}) as matching`.execute(
      db,
    ),
  ]);
  return { rows: list.rows, total: count.rows[0]?.total ?? 0 };
}

/** Which SCIM user holds this userName (case-insensitively) or this externalId, other than `exceptId`. */
export async function holderOf(
  db: DbOrTx,
  tenant: Tenant,
  field: 'user_name' | 'external_id',
  value: string,
  exceptId?: string,
): Promise<string | undefined> {
  const match = field === 'user_name' ? sql`lower(user_name) = lower(${value})` : sql`external_id = ${value}`;
  const { rows } = await sql<{ id: string }>`
    select id from scim_users where ${tenantIs(tenant)} and ${match} ${exceptId ? sql`and id <> ${exceptId}` : sql``}
    limit 1`.execute(db);
  return rows[0]?.id;
}

/** The user whose respondent's e-mail address is `email` (case-insensitively), if any (`respondents_by_email`). */
export async function userWithEmail(db: DbOrTx, tenant: Tenant, email: string): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`
    select s.id from respondents r
    join scim_users s on s.organization_id = r.organization_id and s.environment = r.environment
      and s.external_id = r.external_id
    where ${tenantIs(tenant, 'r')} and ${tenantIs(tenant, 's')} and lower(r.email) = lower(${email})
    limit 1`.execute(db);
  return rows[0]?.id;
}

/** The externalIds of SCIM users by their ids (to read a `manager.value` that names a user by `id`). */
export async function externalIdsOf(db: DbOrTx, tenant: Tenant, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{ id: string; external_id: string }>`
    select id, external_id from scim_users where ${tenantIs(tenant)} and id = any(${[...ids]}::text[])`.execute(db);
  return new Map(rows.map((row) => [row.id, row.external_id]));
}

export interface ScimRow {
  id: string;
  externalId: string;
  userName: string;
  active: boolean;
  preferredLanguage: string | null;
  employeeNumber: string | null;
  emails: ScimEmail[];
}

/** The SCIM row of a respondent SCIM has just created (through the respondents' writer, told not to). */
export async function insertUser(db: DbOrTx, tenant: Tenant, row: ScimRow): Promise<void> {
  await sql`
    insert into scim_users (organization_id, environment, id, external_id, user_name, active, preferred_language,
      employee_number, emails)
    values (${tenant.organizationId}, ${tenant.environment}, ${row.id}, ${row.externalId}, ${row.userName}, ${row.active},
      ${row.preferredLanguage}, ${row.employeeNumber}, ${JSON.stringify(row.emails)}::jsonb)`.execute(db);
}

/** Updates the SCIM row, and its `updated_at` (hence the version) only when something changed. */
export async function updateUser(db: DbOrTx, tenant: Tenant, row: ScimRow): Promise<void> {
  await sql`
    update scim_users set user_name = ${row.userName}, active = ${row.active},
      preferred_language = ${row.preferredLanguage}, employee_number = ${row.employeeNumber},
      emails = ${JSON.stringify(row.emails)}::jsonb, updated_at = now()
    where ${tenantIs(tenant)} and id = ${row.id}
      and (user_name, active, preferred_language, employee_number, emails) is distinct from
        (${row.userName}::text, ${row.active}::boolean, ${row.preferredLanguage}::text, ${row.employeeNumber}::text,
          ${JSON.stringify(row.emails)}::jsonb)`.execute(db);
}
