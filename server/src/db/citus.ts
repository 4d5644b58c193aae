/**
 * Citus at run time: whether the database is a coordinator, and the shard statistics every start sets. The tables
 * are distributed by the migrations when the database has the `citus` extension (2026-11-26T0500_distribute_on_citus,
 * which says what is distributed, replicated or local, and why). The operators' tools (where tenants live, moving
 * them) are in citus-tenants.ts, apart from the request path.
 */
import { sql } from 'kysely';
import type { DbOrTx } from './database.js';

/**
 * Whether the database is a Citus coordinator: a few statements that cannot run across shards take another form.
 * Asked once per database handle (the request path asks at every fold): the extension is there before the
 * migrations run, and a database does not stop being a coordinator.
 */
export function onCitus(db: DbOrTx): Promise<boolean> {
  let answer = citusByHandle.get(db);
  if (answer === undefined) {
    answer = sql<{ citus: boolean }>`select exists (select 1 from pg_extension where extname = 'citus') as citus`
      .execute(db)
      .then(({ rows }) => rows[0]?.citus === true);
    // A failed question is asked again next time.
    answer.catch(() => citusByHandle.delete(db));
    citusByHandle.set(db, answer);
  }
  return answer;
}

const citusByHandle = new WeakMap<DbOrTx, Promise<boolean>>();

/**
 * Sets on every shard the column options that Citus does not carry to the shards a split makes: each survey's
 * response-count deltas are a few rows, whatever ANALYZE saw (migration 2026-11-28T0200). Idempotent, and nothing is
 * changed when every shard has the option already.
 */
export async function hintShardStatistics(db: DbOrTx): Promise<void> {
  // Every start runs this: a read of the shards' column options first, since the ALTER locks each shard
  // exclusively (a moment of waiting for the traffic of processes already running).
  const { rows: options } = await sql<{ success: boolean; result: string }>`
    select success, result from run_command_on_shards('survey_response_counts',
      $$select coalesce(array_to_string(attoptions, ','), '') from pg_attribute
        where attrelid = '%s'::regclass and attname = 'survey_id'$$)`.execute(db);
  if (options.length > 0 && options.every((row) => row.success && row.result.split(',').includes('n_distinct=-1')))
    return;
  // run_command_on_shards reports a shard's failure as a row instead of raising it.
  const { rows } = await sql<{ shardid: string; success: boolean; result: string }>`
    select shardid, success, result from run_command_on_shards('survey_response_counts',
      'alter table %s alter column survey_id set (n_distinct = -1)')`.execute(db);
  const failed = rows.find((row) => !row.success);
  if (failed) throw new Error(`shard ${failed.shardid} of survey_response_counts: ${failed.result}`);
  // The option counts from the next ANALYZE on; the table holds only unfolded deltas, so this one is quick.
  await sql`analyze survey_response_counts`.execute(db);
}
