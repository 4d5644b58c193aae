/**
 * Distributions: the sendings of a survey, their recipients (with a snapshot of the respondent's fields taken
 * at the send, so answers can be segmented by the department a person had when asked), the organization's
 * unsubscribed addresses, the secret that derives personal links, and `responses.distribution_id`.
 * Tenant tables lead their keys and indexes with (organization_id, environment). Frozen: later changes go
 * into new migration files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('distributions')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull().references('surveys.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('scheduled', 'sending', 'sent', 'held', 'cancelled', 'failed')`),
    )
    .addColumn('method', 'text', (c) => c.notNull().check(sql`method in ('email', 'link', 'embed')`))
    // The request's targeting, as sent (validated); compiled again at the send.
    .addColumn('targeting', 'jsonb', (c) => c.notNull())
    .addColumn('schedule', 'timestamptz', (c) => c.notNull())
    .addColumn('reminder_enabled', 'boolean', (c) => c.notNull())
    .addColumn('reminder_after_days', 'integer', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('message', 'text')
    .addColumn('link_expires_in_days', 'integer', (c) => c.notNull())
    // Set at the send: when the links (and the embed token) stop working.
    .addColumn('expires_at', 'timestamptz')
    .addColumn('matched_count', 'integer')
    .addColumn('sent_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unsubscribed_count', 'integer', (c) => c.notNull().defaultTo(0))
    // SHA-256 of the embed token (method embed); the token itself is derived from LINK_SECRET, never stored.
    .addColumn('embed_token_hash', 'bytea')
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('reminder_status', 'text', (c) =>
      c.notNull().defaultTo('none').check(sql`reminder_status in ('none', 'scheduled', 'sending', 'sent', 'cancelled')`),
    )
    .addColumn('reminder_sent_at', 'timestamptz')
    // Why the distribution failed (the mail server's last answer).
    .addColumn('failure_reason', 'text')
    // Times a worker took the send up; a send that keeps crashing its worker is failed, not retried forever.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('distributions_pk', ['organization_id', 'environment', 'id'])
    .execute();
  // listDistributions: one survey, newest first.
  await sql`create index distributions_by_survey on distributions (organization_id, environment, survey_id, created_at desc, id desc)`.execute(db);
  await sql`create unique index distributions_by_embed_token on distributions (organization_id, environment, embed_token_hash) where embed_token_hash is not null`.execute(db);

  await db.schema
    .createTable('distribution_recipients')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('distribution_id', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text', (c) => c.notNull())
    // The snapshot: the respondent's columns as they were at the send, named exactly as in `respondents`, so the
    // targeting compiler (modules/targeting) runs unchanged over recipients.
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
    // SHA-256 of the personal token; the token is an HMAC (LINK_SECRET) of the recipient, never stored.
    .addColumn('token_hash', 'bytea', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'sent', 'failed', 'bounced', 'unsubscribed', 'responded')`),
    )
    .addColumn('sent_at', 'timestamptz')
    .addColumn('responded_at', 'timestamptz')
    .addColumn('response_id', 'text')
    .addColumn('reminder_sent_at', 'timestamptz')
    .addColumn('error', 'text')
    // Temporary SMTP refusals so far; the recipient is failed after a few.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('distribution_recipients_pk', ['organization_id', 'environment', 'distribution_id', 'external_id'])
    .addForeignKeyConstraint(
      'distribution_recipients_distribution_fk',
      ['organization_id', 'environment', 'distribution_id'],
      'distributions',
      ['organization_id', 'environment', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  // The answer page finds a recipient by its token (the token carries the organization and environment).
  await sql`create unique index distribution_recipients_by_token on distribution_recipients (organization_id, environment, token_hash)`.execute(db);
  // Sending picks pending recipients; counts group by status.
  await sql`create index distribution_recipients_by_status on distribution_recipients (organization_id, environment, distribution_id, status)`.execute(db);
  // Analytics: a survey's recipients by respondent (the snapshot a response is segmented by).
  await sql`create index distribution_recipients_by_survey on distribution_recipients (organization_id, environment, survey_id, external_id)`.execute(db);

  await db.schema
    .createTable('unsubscribes')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('email_lower', 'text', (c) => c.notNull())
    .addColumn('distribution_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('unsubscribes_pk', ['organization_id', 'environment', 'email_lower'])
    .execute();

  // One row: the key personal links are derived from when LINK_SECRET is not set (development).
  await db.schema
    .createTable('link_secrets')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('secret', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.alterTable('responses').addColumn('distribution_id', 'text').execute();
  await sql`create index responses_by_distribution on responses (organization_id, environment, distribution_id) where distribution_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists responses_by_distribution`.execute(db);
  await db.schema.alterTable('responses').dropColumn('distribution_id').execute();
  for (const table of ['link_secrets', 'unsubscribes', 'distribution_recipients', 'distributions']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
