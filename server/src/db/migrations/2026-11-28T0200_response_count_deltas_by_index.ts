/**
 * A survey's unfolded response-count deltas are read through their index, whatever the table's statistics say.
 * Frozen: later changes go into new files.
 *
 * Every survey read sums its rows of `survey_response_counts` (surveys/repository.ts, `responseCount`). While one
 * survey collects responses, it holds nearly every row of the table, and the rows are deleted by each fold, so the
 * table is mostly dead space between vacuums. ANALYZE then sees one distinct `survey_id` and estimates that any
 * survey has all the rows, so the planner scans the whole table once per survey of a list page: after 30,000
 * submissions to one survey, the list of 50 surveys read 17,300 buffers (4.4 ms) instead of 190 (0.4 ms) and its
 * throughput fell from about 3,300 to 900 requests/s. Declaring the column's values distinct (`n_distinct = -1`)
 * makes each survey's estimate a few rows, so the lookup uses `survey_response_counts_by_survey`; a busy survey
 * has at most a few hundred unfolded rows, which the index reads in a few pages.
 *
 * Citus cannot alter a distributed table's column options, and plans each shard with that shard's statistics. There
 * the option is set on every shard by `hintShardStatistics` (db/citus.ts), after the migrations commit (a shard
 * that the migrator's transaction creates is not visible to the connections `run_command_on_shards` opens) and
 * after a tenant isolation (Citus does not carry column options to the shards a split makes); not here.
 */
import { sql, type Kysely } from 'kysely';

async function onCitus(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    select exists (select 1 from pg_extension where extname = 'citus') as citus`.execute(db);
  return rows[0]?.citus === true;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (await onCitus(db)) return;
  await sql`alter table survey_response_counts alter column survey_id set (n_distinct = -1)`.execute(db);
  await sql`analyze survey_response_counts`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await onCitus(db)) return;
  await sql`alter table survey_response_counts alter column survey_id reset (n_distinct)`.execute(db);
  await sql`analyze survey_response_counts`.execute(db);
}
