/**
 * Scale-out on Citus: on a database with the `citus` extension, every tenant table distributed by
 * `organization_id` in one co-location group, and the small global tables replicated to every node.
 *
 * Not a migration yet. The service does not run on Citus until every statement of its request path routes to one
 * shard (docs/DECISIONS.md, "Citus: where it stands"); until then a migration that distributed the tables would
 * break a Citus deployment that is not broken today, and once run it could never change. The test harness's
 * Citus mode (`CITUS=1`, test/citus/cluster.ts) applies it after the migrations, to find what does not route.
 * When it is complete, a migration takes this text (frozen there) and runs it by detection.
 *
 * - Reference tables (a copy on every node, so a join with them stays on the tenant's shard):
 *   `organizations` (every tenant table's foreign keys point to it, and its rows are read with every key),
 *   `api_keys` (authentication finds a key by its hash before it knows the tenant: on every node that lookup is
 *   local instead of a fan-out to all shards), `link_secrets` (one row).
 * - Local to the coordinator: `rate_limits` (counters keyed by key id or client address, written on every
 *   request, never joined), the migrator's tables, and pg-boss's schema, which pg-boss creates itself.
 * - Distributed by `organization_id`, co-located with `surveys`: every other table. Each one's keys, unique
 *   indexes and foreign keys lead with the tenant (2026-11-26T0200), so Citus enforces them per shard, and one
 *   tenant's rows of every table sit on the same node: a request joins them there.
 * - The statement triggers of `responses` (the analytics copy and counts, the deletion log) are distributed with
 *   `citus.enable_unsafe_triggers`, but they fail on the shard's node: a transition table cannot appear in a
 *   statement Citus plans. They have to become statements of the one response writer.
 * - The foreign keys among these tables are dropped first and re-created once every table has its place. Citus
 *   cannot distribute them one by one with the keys in place: making `organizations` a reference table turns
 *   every local table linked to it by a foreign key, directly or through others, into a Citus local table
 *   (`citus.enable_local_reference_table_foreign_keys`), and distributing one of those (`surveys`) then fails on
 *   the keys that the others, still local, hold to it ("cannot create foreign key constraint since foreign keys
 *   from reference tables and local tables to distributed tables are not supported"). Re-created, each key is
 *   enforced per shard: the distributed ones lead with `organization_id` between co-located tables, the others
 *   point to the reference table `organizations`.
 */
import { sql } from 'kysely';
import type { Db, DbOrTx } from './database.js';

const referenceTables = ['organizations', 'link_secrets', 'api_keys'];

const distributedTables = [
  'surveys',
  'analytics_settings',
  'events',
  'exports',
  'export_chunks',
  'idempotency_keys',
  'respondents',
  'response_deletions',
  'survey_response_counts',
  'ai_analyses',
  'distributions',
  'distribution_recipients',
  'responses',
  'sync_jobs',
  'sync_job_batches',
  'unsubscribes',
  'webhooks',
  'webhook_secrets',
  'webhook_deliveries',
  'analytics_responses',
  'analytics_daily_cells',
  'analytics_segment_cells',
];

export async function onCitus(db: DbOrTx): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

/** Distributes the tables of a migrated database that has the `citus` extension; does nothing on plain PostgreSQL. */
export async function distributeTenantTables(db: Db): Promise<void> {
  if (!(await onCitus(db))) return;
  await db.transaction().execute(async (tx) => {
    // One connection per node for the whole change: the tables are created, filled and constrained in one
    // transaction, which Citus can only do sequentially.
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(tx);
    await sql`set local citus.enable_unsafe_triggers to on`.execute(tx);
    await withoutForeignKeys(tx, async () => {
      for (const table of referenceTables) await sql`select create_reference_table(${table})`.execute(tx);
      const [first, ...rest] = distributedTables;
      await sql`select create_distributed_table(${first!}, 'organization_id')`.execute(tx);
      for (const table of rest) {
        await sql`select create_distributed_table(${table}, 'organization_id', colocate_with => ${first!})`.execute(tx);
      }
    });
  });
}

/** Undoes `distributeTenantTables`. */
export async function undistributeTenantTables(db: Db): Promise<void> {
  if (!(await onCitus(db))) return;
  await db.transaction().execute(async (tx) => {
    await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(tx);
    await withoutForeignKeys(tx, async () => {
      for (const table of [...distributedTables, ...referenceTables]) {
        await sql`select undistribute_table(${table})`.execute(tx);
      }
    });
  });
}

/** Runs `change` with the foreign keys of these tables dropped, and re-creates them as they were. */
async function withoutForeignKeys(db: DbOrTx, change: () => Promise<void>): Promise<void> {
  const { rows: foreignKeys } = await sql<{ table: string; name: string; definition: string }>`
    select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as definition
    from pg_constraint
    where contype = 'f' and conrelid = any(${[...referenceTables, ...distributedTables]}::regclass[])
    order by conrelid::regclass::text, conname`.execute(db);
  for (const key of foreignKeys) {
    await sql`alter table ${sql.id(key.table)} drop constraint ${sql.id(key.name)}`.execute(db);
  }
  await change();
  for (const key of foreignKeys) {
    await sql`alter table ${sql.id(key.table)} add constraint ${sql.id(key.name)} ${sql.raw(key.definition)}`.execute(
      db,
    );
  }
}
