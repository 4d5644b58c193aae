/**
 * The audit log: one row per read of identified data or change a privacy officer is asked about (modules/audit).
 * Frozen: later changes go into new files.
 *
 * Append-only in the database, not only in the code: a row trigger refuses every UPDATE, and every DELETE but the
 * two the service makes — of entries past their year (the audit module's daily job) and those an organization's
 * deletion cascades to (fired from the foreign key's own trigger, so `pg_trigger_depth()` is 2). A statement
 * trigger refuses TRUNCATE. The trigger functions run no SQL, so on Citus they are safe on the shards
 * (`citus.enable_unsafe_triggers` is needed to create them all the same).
 *
 * Keyed by tenant first and, on Citus, distributed by `organization_id` and co-located with `surveys`. The id
 * (`aud_…`, sortable by creation time) orders the log; `occurred_at` is what the time filters read. The one index
 * not led by the tenant, `audit_log_by_age`, serves the daily expiry across tenants, as `events_by_age` does.
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const citus = await onCitus(db);
  if (citus) {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
    await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
  }
  await sql`
    create table audit_log (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      id text not null,
      occurred_at timestamptz not null default now(),
      actor_type text not null check (actor_type in ('key', 'system')),
      actor_key_id text,
      actor_name text,
      action text not null,
      target_type text not null,
      target_id text,
      request_id text,
      client_address text,
      constraint audit_log_pk primary key (organization_id, environment, id),
      constraint audit_log_actor check ((actor_type = 'key') = (actor_key_id is not null))
    )`.execute(db);
  await sql`create index audit_log_by_target on audit_log (organization_id, environment, target_id, id)`.execute(db);
  await sql`create index audit_log_by_age on audit_log (occurred_at)`.execute(db);
  if (citus)
    await sql`select create_distributed_table('audit_log', 'organization_id', colocate_with => 'surveys')`.execute(db);
  await sql`alter table audit_log add constraint audit_log_organization
    foreign key (organization_id) references organizations (id) on delete cascade`.execute(db);
  await sql`
    create function audit_log_append_only() returns trigger
    language plpgsql
    as $$
    begin
      if tg_op = 'DELETE' and (old.occurred_at < now() - interval '1 year' or pg_trigger_depth() > 1) then
        return old;
      end if;
      raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`
    create function audit_log_not_truncated() returns trigger
    language plpgsql
    as $$
    begin
      raise exception 'audit_log is append-only: TRUNCATE refused' using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`create trigger audit_log_append_only before update or delete on audit_log
    for each row execute function audit_log_append_only()`.execute(db);
  await sql`create trigger audit_log_not_truncated before truncate on audit_log
    for each statement execute function audit_log_not_truncated()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await onCitus(db)) {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
    await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
  }
  await sql`drop table audit_log`.execute(db);
  await sql`drop function audit_log_not_truncated()`.execute(db);
  await sql`drop function audit_log_append_only()`.execute(db);
}
