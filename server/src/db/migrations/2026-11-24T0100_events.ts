/**
 * The event log (a transactional outbox): one row per fact, written in the transaction of the change it
 * describes. Webhook deliveries and `listEvents` read from here. Frozen: later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    // The event's `data` (the resource named by `type`, as it was), exactly as delivered.
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('events_pk', ['organization_id', 'environment', 'id'])
    .execute();
  // listEvents: tenant, newest first (ids sort by time), optionally one type.
  await sql`create index events_by_tenant on events (organization_id, environment, created_at desc, id desc)`.execute(db);
  await sql`create index events_by_type on events (organization_id, environment, type, created_at desc, id desc)`.execute(db);
  // Retention clean-up scans by age across tenants.
  await sql`create index events_by_age on events (created_at)`.execute(db);
}
