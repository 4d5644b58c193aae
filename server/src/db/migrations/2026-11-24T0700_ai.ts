/**
 * AI analyses of a survey's responses. Tenant-led keys (organization, environment) for a Citus-style
 * distribution by organization. Frozen: later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ai_analyses')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull().references('surveys.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'processing', 'completed', 'failed')`))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text')
    // The request's scope: { questionIds?, focus? }.
    .addColumn('request', 'jsonb', (c) => c.notNull())
    .addColumn('response_count', 'integer', (c) => c.notNull().defaultTo(0))
    // The completed result (the contract's result fields), written once, with the status, in one transaction.
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    // Runs started (a worker killed mid-run leaves one behind; the next run counts again).
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addPrimaryKeyConstraint('ai_analyses_pk', ['organization_id', 'environment', 'id'])
    .execute();
  // getLatestAiAnalysis: one survey's analyses, newest first (ids sort by time).
  await sql`create index ai_analyses_by_survey on ai_analyses (organization_id, environment, survey_id, created_at desc, id desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ai_analyses').ifExists().execute();
}
