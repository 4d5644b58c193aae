/**
 * Respondents (shaped for targeting: indexed columns and JSONB attributes), sync jobs and the durable copy of
 * each sync request's records. Frozen: later changes go into new migration files.
 */
import { sql, type Kysely } from 'kysely';

const targetingColumns = ['department', 'location', 'job_title', 'employment_type', 'manager_id', 'hire_date'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('respondents')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('department', 'text')
    .addColumn('location', 'text')
    .addColumn('job_title', 'text')
    .addColumn('manager_id', 'text')
    .addColumn('hire_date', 'date')
    .addColumn('employment_type', 'text')
    .addColumn('attributes', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    // Hash of every API-visible field: lets a sync count an unchanged record as skipped without comparing columns.
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('respondents_pk', ['organization_id', 'environment', 'external_id'])
    .execute();
  for (const column of targetingColumns) {
    await db.schema
      .createIndex(`respondents_by_${column}`)
      .on('respondents')
      .columns(['organization_id', 'environment', column])
      .execute();
  }
  // E-mails are stored as sent and matched case-insensitively.
  await sql`create index respondents_by_email on respondents (organization_id, environment, lower(email))`.execute(db);
  await sql`create index respondents_attributes on respondents using gin (attributes jsonb_path_ops)`.execute(db);

  await db.schema
    .createTable('sync_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('upsert', 'replace', 'append')`))
    .addColumn('dry_run', 'boolean', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'processing', 'completed', 'failed')`))
    .addColumn('total_records', 'integer', (c) => c.notNull())
    .addColumn('processed_records', 'integer', (c) => c.notNull().defaultTo(0))
    // Batches whose writes and counts are committed.
    .addColumn('processed_batches', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('failure_reason', 'text')
    // How many times a worker took the job up; a job that keeps crashing its worker is failed, not retried forever.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('sync_jobs_by_tenant').on('sync_jobs').columns(['organization_id', 'environment', 'status', 'created_at']).execute();
  await db.schema.createIndex('sync_jobs_by_completion').on('sync_jobs').columns(['completed_at']).execute();

  // The request's records, stored in the same transaction as the job, one row per batch, so that a crash never
  // loses a request and a resumed job reads exactly the same batches.
  await db.schema
    .createTable('sync_job_batches')
    .addColumn('job_id', 'text', (c) => c.notNull().references('sync_jobs.id').onDelete('cascade'))
    .addColumn('batch_no', 'integer', (c) => c.notNull())
    // JSON text of the batch's records, as received. `text`, not json/jsonb: the worker parses and checks every
    // record anyway, and the request path should not pay for a second parse.
    .addColumn('records', 'text', (c) => c.notNull())
    // Positions (within the batch) of records whose externalId occurs again later in the request.
    .addColumn('superseded', sql`integer[]`, (c) => c.notNull())
    // Set in the transaction that writes the batch (upsert, append): a resumed job skips exactly these.
    .addColumn('done', 'boolean', (c) => c.notNull().defaultTo(false))
    .addPrimaryKeyConstraint('sync_job_batches_pk', ['job_id', 'batch_no'])
    .execute();
  // Large, short-lived values: compressing them costs more time than the space it saves.
  await sql`alter table sync_job_batches alter column records set storage external`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['sync_job_batches', 'sync_jobs', 'respondents']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
