/**
 * Retention (modules/retention): each environment's policy and the runs of the daily job that applies it. Frozen:
 * later changes go into new files.
 *
 * - `retention_settings`: one row per organization and environment that set a policy (none: the defaults). The
 *   responses' rule, the survey exceptions and the legal holds are JSON as the contract shapes them; the durations
 *   are columns, checked against the contract's bounds.
 * - `retention_runs`: one row per run, at most one a day per environment (`retention_runs_one_a_day`): the daily
 *   job inserts it and enqueues its work in one transaction, and each batch of the work adds its counts to
 *   `removed` in the batch's own transaction, so a crash resumes a run without counting anything twice.
 *
 * Keyed by tenant first and, on Citus, distributed by `organization_id` and co-located with `surveys`, so a run's
 * batches (over the tenant's responses, exports and events) run on the tenant's node. The daily job's one query
 * across tenants reads `retention_settings` whole (a row per environment with a policy).
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
    create table retention_settings (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      responses jsonb,
      export_files_days integer not null default 7 check (export_files_days between 1 and 7),
      events_days integer not null default 30 check (events_days between 1 and 30),
      webhook_deliveries_days integer not null default 30 check (webhook_deliveries_days between 1 and 30),
      survey_exceptions jsonb not null default '[]',
      legal_holds jsonb not null default '[]',
      updated_at timestamptz not null default now(),
      constraint retention_settings_pk primary key (organization_id, environment)
    )`.execute(db);
  await sql`
    create table retention_runs (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      id text not null,
      day date not null,
      status text not null check (status in ('running', 'completed')),
      attempts integer not null default 0,
      started_at timestamptz not null default now(),
      completed_at timestamptz,
      removed jsonb not null,
      constraint retention_runs_pk primary key (organization_id, environment, id),
      constraint retention_runs_one_a_day unique (organization_id, environment, day)
    )`.execute(db);
  await sql`create index retention_runs_by_tenant
    on retention_runs (organization_id, environment, started_at desc, id desc)`.execute(db);
  if (citus) {
    for (const table of ['retention_settings', 'retention_runs']) {
      await sql`select create_distributed_table(${table}, 'organization_id', colocate_with => 'surveys')`.execute(db);
    }
  }
  // The keys come once the tables have their place on Citus (a local table cannot point at a distributed one).
  for (const table of ['retention_settings', 'retention_runs']) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.ref(`${table}_organization`)}
      foreign key (organization_id) references organizations (id) on delete cascade`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`drop table retention_runs`.execute(db);
  await sql`drop table retention_settings`.execute(db);
}
