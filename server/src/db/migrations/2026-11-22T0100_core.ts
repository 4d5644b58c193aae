/**
 * Organizations, API keys, idempotency records and the shared rate-limit counters. Frozen: later changes
 * go into new migration files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull().check(sql`plan in ('FREE', 'STARTER', 'PRO', 'BUSINESS')`))
    .addColumn('rate_limit_per_minute', 'integer')
    .addColumn('rate_limit_per_day', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('LIVE', 'TEST')`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('api_keys_by_tenant')
    .on('api_keys')
    .columns(['organization_id', 'environment', 'created_at'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['organization_id', 'environment', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_by_age').on('idempotency_keys').column('created_at').execute();

  // The layout rate-limiter-flexible's RateLimiterPostgres expects (it would create it lazily otherwise).
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expire', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['rate_limits', 'idempotency_keys', 'api_keys', 'organizations']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
