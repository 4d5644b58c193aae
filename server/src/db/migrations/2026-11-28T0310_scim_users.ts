/**
 * SCIM users: what a SCIM client knows of a respondent beyond the respondent's own fields — the service-assigned
 * `id`, the `userName`, `active`, `preferredLanguage` and `employeeNumber`. One row per respondent that SCIM created
 * or adopted, keyed like the respondent and removed with it (the foreign key cascades, so `DELETE /respondents`, a
 * `replace` sync and SCIM's own DELETE all leave no user behind). Frozen: later changes go into new files.
 *
 * `user_name` is unique per tenant case-insensitively (RFC 7643 §4.1.1: userName is caseExact false). On Citus the
 * table is distributed by `organization_id` and co-located with `respondents`, so the join, the unique indexes and
 * the foreign key are enforced on the tenant's shard.
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`
    create table scim_users (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      id text not null,
      external_id text not null,
      user_name text not null,
      active boolean not null default true,
      preferred_language text,
      employee_number text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint scim_users_pk primary key (organization_id, environment, id)
    )`.execute(db);
  await sql`create unique index scim_users_by_external_id on scim_users (organization_id, environment, external_id)`.execute(
    db,
  );
  await sql`create unique index scim_users_by_user_name on scim_users (organization_id, environment, lower(user_name))`.execute(
    db,
  );
  // Targeting and reminders leave out the inactive: a partial index keeps that check to the few such rows.
  await sql`create index scim_users_inactive on scim_users (organization_id, environment, external_id) where not active`.execute(
    db,
  );
  if (citus) {
    await sql`select create_distributed_table('scim_users', 'organization_id', colocate_with => 'respondents')`.execute(
      db,
    );
  }
  // The keys come once the table has its place on Citus (a local table cannot point at a distributed one).
  await sql`alter table scim_users add constraint scim_users_organization foreign key (organization_id)
    references organizations (id) on delete cascade`.execute(db);
  await sql`alter table scim_users add constraint scim_users_respondent foreign key (organization_id, environment, external_id)
    references respondents (organization_id, environment, external_id) on delete cascade`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table scim_users`.execute(db);
}
