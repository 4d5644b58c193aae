/**
 * Surveys and their responses. Frozen: later changes go into new migration files.
 *
 * `responses.dedupe_key` carries the respondent id only for surveys that allow one response each, so a plain
 * partial unique index enforces "one response per respondent" even under concurrent submissions.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('surveys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('draft', 'active', 'paused', 'closed')`))
    .addColumn('questions', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .addColumn('response_count', 'integer', (c) => c.notNull().defaultTo(0).check(sql`response_count >= 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('launched_at', 'timestamptz')
    .addColumn('paused_at', 'timestamptz')
    .addColumn('closed_at', 'timestamptz')
    .addColumn('first_launched_at', 'timestamptz')
    .execute();
  // listSurveys: tenant, newest first, id as tie-break.
  await sql`create index surveys_by_tenant on surveys (organization_id, environment, created_at desc, id desc)`.execute(db);

  await db.schema
    .createTable('responses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('survey_id', 'text', (c) => c.notNull().references('surveys.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('respondent_external_id', 'text')
    .addColumn('dedupe_key', 'text')
    .addColumn('answers', 'jsonb', (c) => c.notNull())
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // listResponses: one survey, newest first, id as tie-break.
  await sql`create index responses_by_survey on responses (survey_id, submitted_at desc, id desc)`.execute(db);
  await sql`create index responses_by_respondent on responses (survey_id, respondent_external_id) where respondent_external_id is not null`.execute(db);
  await sql`create unique index responses_one_per_respondent on responses (survey_id, dedupe_key) where dedupe_key is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('responses').ifExists().execute();
  await db.schema.dropTable('surveys').ifExists().execute();
}
