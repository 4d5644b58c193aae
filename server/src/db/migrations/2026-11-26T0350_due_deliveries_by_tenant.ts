/**
 * The dispatchers claim due deliveries tenant by tenant (modules/webhooks/queue.ts `claimDue`), so that each
 * claim is one statement on one tenant's rows. This index serves that claim; `webhook_deliveries_due` still
 * serves the one read of which tenants have due rows. Frozen: later changes go into new files.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index webhook_deliveries_due_by_tenant on webhook_deliveries (organization_id, environment, due_at)
    where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index webhook_deliveries_due_by_tenant`.execute(db);
}
