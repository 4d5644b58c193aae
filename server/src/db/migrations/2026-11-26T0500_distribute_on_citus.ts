/**
 * On Citus, the tenant tables distributed by `organization_id` in one co-location group, and the small global
 * tables replicated to every node. Runs only when the database has the `citus` extension (created before the first
 * migration, README "Scaling out"); on plain PostgreSQL it does nothing. Frozen: later changes go into new files.
 *
 * - Reference tables (a copy on every node, so a join with them stays on the tenant's shard):
 *   `organizations` (every tenant table's foreign keys point to it, and its rows are read with every key;
 *   distributing it by its id would co-locate it too, but then the CLI's and maintenance's reads of all
 *   organizations would fan out, and the reference copy is a few rows per customer),
 *   `api_keys` (authentication finds a key by its hash before it knows the tenant: on every node that lookup is
 *   local instead of a fan-out to all shards), `link_secrets` (one row).
 * - Local to the coordinator: `rate_limits` (counters keyed by key id or client address, written on every
 *   request, never joined), the migrator's tables, and pg-boss's schema, which pg-boss creates itself.
 * - Distributed by `organization_id`, co-located with `surveys`: every other table. Each one's keys, unique
 *   indexes and foreign keys lead with the tenant (2026-11-26T0200), so Citus enforces them per shard, and one
 *   tenant's rows of every table sit on the same node: a request joins them there. The row triggers of
 *   `responses` (2026-11-26T0400) are distributed with `citus.enable_unsafe_triggers`: each of their statements
 *   names the row's tenant, so they touch only the co-located shards of the node they fire on.
 * - The foreign keys among these tables are dropped first and re-created once every table has its place. Citus
 *   cannot distribute them one by one with the keys in place: making `organizations` a reference table turns
 *   every local table linked to it by a foreign key into a Citus local table, and distributing one of those
 *   (`surveys`) then fails on the keys that the others, still local, hold to it. Re-created, each key is enforced
 *   per shard: the distributed ones lead with `organization_id` between co-located tables, the others point to
 *   the reference table `organizations`.
 */
import { sql, type Kysely } from 'kysely';

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

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(await onCitus(db))) return;
  // One connection per node for the whole change: the tables are created, filled and constrained in the
  // migrator's transaction, which Citus can only do sequentially.
  await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await sql`set local citus.enable_unsafe_triggers to on`.execute(db);
  await withoutForeignKeys(db, async () => {
    for (const table of referenceTables) await sql`select create_reference_table(${table})`.execute(db);
    const [first, ...rest] = distributedTables;
    await sql`select create_distributed_table(${first!}, 'organization_id')`.execute(db);
    for (const table of rest) {
      await sql`select create_distributed_table(${table}, 'organization_id', colocate_with => ${first!})`.execute(db);
    }
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(await onCitus(db))) return;
  await sql`set local citus.multi_shard_modify_mode to 'sequential'`.execute(db);
  await withoutForeignKeys(db, async () => {
    for (const table of [...distributedTables, ...referenceTables]) {
      await sql`select undistribute_table(${table})`.execute(db);
    }
  });
}

/** Runs `change` with the foreign keys of these tables dropped, and re-creates them as they were. */
async function withoutForeignKeys(db: Kysely<unknown>, change: () => Promise<void>): Promise<void> {
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
