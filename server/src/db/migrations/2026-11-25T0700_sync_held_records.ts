/**
 * Sync records that cannot be stored as JSON as they came. Frozen: later changes go into new files.
 *
 * A sync refuses only its envelope; every problem of one record is that record's error. A record nested past
 * the depth limit, or holding a number JSON cannot carry (`1e400` parses as Infinity, which JSON.stringify writes
 * as `null`), cannot travel to the worker in the stored batch: its problems are found when the request is read
 * (the respondent validator, `recordProblems`) and stored beside the batch, its place in `records` holding
 * `null`. `held` is the list of those errors (the job's `SyncRecordError`s, by index in the request).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_job_batches add column held jsonb not null default '[]'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sync_job_batches drop column held`.execute(db);
}
