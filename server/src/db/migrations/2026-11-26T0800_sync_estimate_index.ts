/**
 * The sync estimate reads a tenant's latest completed syncs (respondents/sync-repository.ts, `measuredRate`), so
 * its index leads with the tenant like every other; the index on `completed_at` alone served the estimate over
 * every tenant's syncs, which nothing reads any more. Frozen: later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index sync_jobs_by_completion`.execute(db);
  await sql`create index sync_jobs_by_tenant_completion on sync_jobs (organization_id, environment, completed_at)
    where status = 'completed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index sync_jobs_by_tenant_completion`.execute(db);
  await sql`create index sync_jobs_by_completion on sync_jobs (completed_at)`.execute(db);
}
