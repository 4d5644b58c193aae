/**
 * Webhook subscriptions, their signing secrets (two sign during a rotation's overlap window) and their delivery
 * attempts. The attempts table is also the delivery queue: a pending row is claimed with a lease by one worker
 * (modules/webhooks/dispatcher.ts), so a worker that dies mid-attempt leaves a row that another worker takes up
 * once the lease runs out. Frozen: later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // Event types, or ['*'] for every type.
    .addColumn('events', sql`text[]`, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text', (c) => c.check(sql`disabled_reason in ('manual', 'endpoint_gone', 'failing')`))
    .addColumn('disabled_at', 'timestamptz')
    // First failure since the last success: five days of failures disable the webhook.
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhooks_pk', ['organization_id', 'environment', 'id'])
    .execute();
  await sql`create index webhooks_by_tenant on webhooks (organization_id, environment, created_at desc, id desc)`.execute(db);

  await db.schema
    .createTable('webhook_secrets')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    // `whsec_…`: kept as is, since signing needs the key itself (a hash would not do).
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    // null: the current secret; set: a previous one, signing until then.
    .addColumn('expires_at', 'timestamptz')
    .addPrimaryKeyConstraint('webhook_secrets_pk', ['organization_id', 'environment', 'webhook_id', 'created_at'])
    .addForeignKeyConstraint('webhook_secrets_webhook', ['organization_id', 'environment', 'webhook_id'], 'webhooks', ['organization_id', 'environment', 'id'], (c) => c.onDelete('cascade'))
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    // Manual redeliveries and test sends are single attempts, never retried.
    .addColumn('manual', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('response_status', 'integer')
    .addColumn('latency_ms', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // When the attempt may run; a claim holds it until lease_until (then another worker may take it up).
    .addColumn('due_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('lease_until', 'timestamptz')
    .addColumn('claim_token', 'text')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('next_retry_at', 'timestamptz')
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['organization_id', 'environment', 'id'])
    .addForeignKeyConstraint('webhook_deliveries_webhook', ['organization_id', 'environment', 'webhook_id'], 'webhooks', ['organization_id', 'environment', 'id'], (c) => c.onDelete('cascade'))
    // Deliveries go with their event (30 days' retention, see jobs/events.cleanup.ts).
    .addForeignKeyConstraint('webhook_deliveries_event', ['organization_id', 'environment', 'event_id'], 'events', ['organization_id', 'environment', 'id'], (c) => c.onDelete('cascade'))
    .execute();
  // One row per attempt number: a retry scheduled twice (two workers after a lease ran out) is one retry.
  await sql`create unique index webhook_deliveries_attempt on webhook_deliveries (organization_id, environment, webhook_id, event_id, attempt)`.execute(db);
  await sql`create index webhook_deliveries_by_webhook on webhook_deliveries (organization_id, environment, webhook_id, created_at desc, id desc)`.execute(db);
  await sql`create index webhook_deliveries_by_event on webhook_deliveries (organization_id, environment, event_id)`.execute(db);
  // The queue: the dispatchers of every tenant claim due pending rows (small: only pending rows are in it).
  await sql`create index webhook_deliveries_due on webhook_deliveries (due_at) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_secrets').execute();
  await db.schema.dropTable('webhooks').execute();
}
