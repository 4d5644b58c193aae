/**
 * The audit of released analytics results, per survey (modules/analytics/release-audit.ts says what it decides).
 * Frozen: later changes go into new files.
 *
 * - `analytics_release_audits`: one row per survey that released a result: the audit's state (the released groups
 *   over the survey's responses, serialised). A request that releases a group not seen before locks this row, so
 *   two such requests of one survey are decided one after the other, in every API process.
 * - `analytics_released_sets`: the fingerprint of every group released, so that a request whose groups were all
 *   released before (a dashboard asking again, nothing new) is let through by one lookup, without the state.
 *
 * Both are keyed by tenant first, removed with their survey (the foreign key cascades), and on Citus distributed by
 * `organization_id` and co-located with `surveys`, so each request's audit is a single-shard transaction.
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
    create table analytics_release_audits (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      survey_id text not null,
      state text not null,
      updated_at timestamptz not null default now(),
      constraint analytics_release_audits_pk primary key (organization_id, environment, survey_id)
    )`.execute(db);
  await sql`
    create table analytics_released_sets (
      organization_id text not null,
      environment text not null check (environment in ('LIVE', 'TEST')),
      survey_id text not null,
      fingerprint text not null,
      released_at timestamptz not null default now(),
      constraint analytics_released_sets_pk primary key (organization_id, environment, survey_id, fingerprint)
    )`.execute(db);
  if (citus) {
    for (const table of ['analytics_release_audits', 'analytics_released_sets']) {
      await sql`select create_distributed_table(${table}, 'organization_id', colocate_with => 'surveys')`.execute(db);
    }
  }
  // The keys come once the tables have their place on Citus (a local table cannot point at a distributed one).
  for (const table of ['analytics_release_audits', 'analytics_released_sets']) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_survey`)}
      foreign key (organization_id, environment, survey_id)
      references surveys (organization_id, environment, id) on delete cascade`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Sequential on Citus, so that the migrator's later steps in the same transaction may still change functions.
  if (await onCitus(db)) await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`drop table analytics_released_sets`.execute(db);
  await sql`drop table analytics_release_audits`.execute(db);
}
