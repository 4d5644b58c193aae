/**
 * Response exports, their files, and the log of deleted responses that incremental exports report.
 * Frozen: later changes go into new migration files.
 *
 * - `exports`: one row per export (the job's state and its result).
 * - `export_chunks`: the file, in chunks of about 1 MiB, in PostgreSQL so that every API and worker process can
 *   serve it. Chunks belong to an attempt of the job: a crashed attempt's chunks are never part of the file (the
 *   completed export names the attempt whose chunks form it). Stored uncompressed (`storage external`): the
 *   formats compress poorly or are zip already, and byte ranges are read with `substring` without decompressing.
 * - `response_deletions`: filled by a trigger on `responses`, so every way a response disappears (one delete, a
 *   survey's cascade) is recorded with its time, in the deleting transaction.
 *
 * Every key leads with organization and environment (Citus-ready).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('exports')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('id', 'text', (c) => c.notNull())
    // No foreign key: an export (and its deletions list) outlives a deleted survey until it expires.
    .addColumn('survey_id', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull().check(sql`format in ('csv', 'json', 'ndjson', 'xlsx')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'processing', 'completed', 'failed')`))
    .addColumn('question_ids', sql`text[]`)
    .addColumn('choice_values', 'text', (c) => c.notNull().check(sql`choice_values in ('ids', 'labels')`))
    .addColumn('bom', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('submitted_after', 'timestamptz')
    .addColumn('submitted_before', 'timestamptz')
    // Fixed by the first attempt; retries export the same window.
    .addColumn('watermark', 'timestamptz')
    .addColumn('total_rows', 'integer')
    .addColumn('rows_written', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('row_count', 'integer')
    .addColumn('size', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_attempt', 'integer')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('file_deleted_at', 'timestamptz')
    .addPrimaryKeyConstraint('exports_pk', ['organization_id', 'environment', 'id'])
    .execute();
  // `sinceExport` and listing a survey's exports.
  await sql`create index exports_by_survey on exports (organization_id, environment, survey_id, created_at)`.execute(db);
  // The clean-up job scans by expiry across tenants.
  await sql`create index exports_by_expiry on exports (expires_at) where file_deleted_at is null`.execute(db);

  await db.schema
    .createTable('export_chunks')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('export_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('byte_offset', 'bigint', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('export_chunks_pk', ['organization_id', 'environment', 'export_id', 'attempt', 'seq'])
    .addForeignKeyConstraint('export_chunks_export', ['organization_id', 'environment', 'export_id'], 'exports', ['organization_id', 'environment', 'id'], (c) => c.onDelete('cascade'))
    .execute();
  await sql`alter table export_chunks alter column data set storage external`.execute(db);

  await db.schema
    .createTable('response_deletions')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('response_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('response_deletions_pk', ['organization_id', 'environment', 'survey_id', 'deleted_at', 'response_id'])
    .execute();
  await sql`create index response_deletions_by_age on response_deletions (deleted_at)`.execute(db);

  // now() is the deleting transaction's start: the same clock rule as an export's watermark (see Export.watermark).
  await sql`
    create function record_response_deletions() returns trigger language plpgsql as $$
    begin
      insert into response_deletions (organization_id, environment, survey_id, deleted_at, response_id)
      select organization_id, environment, survey_id, now(), id from deleted_responses
      on conflict do nothing;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger responses_record_deletions after delete on responses
    referencing old table as deleted_responses
    for each statement execute function record_response_deletions()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists responses_record_deletions on responses`.execute(db);
  await sql`drop function if exists record_response_deletions()`.execute(db);
  await db.schema.dropTable('response_deletions').ifExists().execute();
  await db.schema.dropTable('export_chunks').ifExists().execute();
  await db.schema.dropTable('exports').ifExists().execute();
}
