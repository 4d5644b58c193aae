/**
 * `REPLICA IDENTITY FULL` for the three tenant tables that have no primary key. Frozen: later changes go into new
 * files.
 *
 * On Citus, a shard moves or splits without blocking writes (`citus_split_shard_by_split_points`,
 * `isolate_tenant_to_new_shard`, `citus_move_shard_placement` with `shard_transfer_mode => 'force_logical'`, or
 * `'auto'`, the default) by logical replication of every table of the co-location group (2026-11-26T0500): the rows
 * are copied, then the changes made meanwhile are decoded from the WAL and replayed on the new shards. An UPDATE
 * or DELETE is replayed by its row's replica identity, by default the primary key. These three tables have none,
 * and no natural one: they hold deltas, several rows per key, that a compaction deletes and folds into one
 * (`survey_response_counts`: +1/−1 per response; `analytics_daily_cells`, `analytics_segment_cells`: counts per
 * survey, day and code or segment). Without a replica identity `'auto'` refuses to move their shards, and under
 * `'force_logical'` PostgreSQL refuses every UPDATE and DELETE of them while a move runs ("cannot delete from
 * table … because it does not have a replica identity and publishes deletes"), so a compaction would fail.
 *
 * `FULL` makes the whole old row the identity: the WAL carries it for an UPDATE or DELETE of these (narrow) rows,
 * and the replay finds the row by all its columns (before PostgreSQL 16 by a scan of the new shard, which folding
 * keeps small). Nothing else changes: no rewrite, no lock beyond the ALTER's own, and on plain PostgreSQL (no
 * publication) the setting is inert. Citus propagates the ALTER to every shard.
 */
import { sql, type Kysely } from 'kysely';

const tables = ['survey_response_counts', 'analytics_daily_cells', 'analytics_segment_cells'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of tables) await sql`alter table ${sql.id(table)} replica identity full`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of tables) await sql`alter table ${sql.id(table)} replica identity default`.execute(db);
}
