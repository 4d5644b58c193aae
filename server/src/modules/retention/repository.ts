/**
 * All SQL of the retention module's own tables: the policies and the runs. Every query names the tenant, but for
 * the daily job's list of the environments that have a policy. What a run removes is removed by the modules that own
 * it (runner.ts).
 */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { RetentionCounts, RetentionSettingsTable, RetentionRunsTable } from './tables.js';

export type SettingsRow = Selectable<RetentionSettingsTable>;
export type RunRow = Selectable<RetentionRunsTable>;

/** How long a run's record is kept: the year the audit log keeps its entry. */
const RUN_RETENTION = '1 year';

export function findSettings(db: DbOrTx, tenant: Tenant): Promise<SettingsRow | undefined> {
  return db.selectFrom('retention_settings').selectAll().where(tenantIs(tenant)).executeTakeFirst();
}

export type SettingsValues = Omit<SettingsRow, 'organization_id' | 'environment' | 'updated_at'>;

export function saveSettings(db: DbOrTx, tenant: Tenant, values: SettingsValues): Promise<SettingsRow> {
  // The time from here: Citus refuses now() (not immutable) in an upsert's DO UPDATE SET.
  const columns = {
    updated_at: new Date(),
    responses: JSON.stringify(values.responses),
    export_files_days: values.export_files_days,
    events_days: values.events_days,
    webhook_deliveries_days: values.webhook_deliveries_days,
    survey_exceptions: JSON.stringify(values.survey_exceptions),
    legal_holds: JSON.stringify(values.legal_holds),
  };
  return db
    .insertInto('retention_settings')
    .values({ ...tenantColumns(tenant), ...columns })
    .onConflict((oc) => oc.columns(['organization_id', 'environment']).doUpdateSet(columns))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The environments with a policy: the daily job's one query across tenants. */
export function tenantsWithPolicies(
  db: DbOrTx,
): Promise<{ organization_id: string; environment: Tenant['environment'] }[]> {
  return acrossTenants(db, 'the daily retention job starts a run in every environment with a policy')
    .selectFrom('retention_settings')
    .select(['organization_id', 'environment'])
    .orderBy('organization_id')
    .orderBy('environment')
    .execute();
}

export const noCounts = (): RetentionCounts => ({
  deletedResponses: 0,
  anonymizedResponses: 0,
  heldResponses: 0,
  surveys: [],
  exportFiles: 0,
  events: 0,
  webhookDeliveries: 0,
});

/** Starts today's run of the tenant unless it has one; the new run, or `undefined`. */
export function insertRun(db: DbOrTx, tenant: Tenant, id: string, day: string): Promise<RunRow | undefined> {
  return db
    .insertInto('retention_runs')
    .values({ ...tenantColumns(tenant), id, day, status: 'running', removed: JSON.stringify(noCounts()) })
    .onConflict((oc) => oc.columns(['organization_id', 'environment', 'day']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function findRun(db: DbOrTx, tenant: Tenant, id: string): Promise<RunRow | undefined> {
  return db.selectFrom('retention_runs').selectAll().where(tenantIs(tenant)).where('id', '=', id).executeTakeFirst();
}

/** The run, its row locked until the caller's transaction ends: one batch at a time adds to its counts. */
export function lockRun(db: DbOrTx, tenant: Tenant, id: string): Promise<RunRow | undefined> {
  return db
    .selectFrom('retention_runs')
    .selectAll()
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function latestRun(db: DbOrTx, tenant: Tenant): Promise<RunRow | undefined> {
  return db
    .selectFrom('retention_runs')
    .selectAll()
    .where(tenantIs(tenant))
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** One more run of it started (the max-runs rule counts these). */
export function beginRun(db: DbOrTx, tenant: Tenant, id: string): Promise<RunRow | undefined> {
  return db
    .updateTable('retention_runs')
    .set({ attempts: sql`attempts + 1` })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
}

export async function saveCounts(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  removed: RetentionCounts,
  completed: boolean,
): Promise<void> {
  await db
    .updateTable('retention_runs')
    .set({
      removed: JSON.stringify(removed),
      ...(completed ? { status: 'completed' as const, completed_at: sql<Date>`now()` } : {}),
    })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .execute();
}

/** Runs past their year, across tenants (the daily job's clean-up). */
export async function deleteOldRuns(db: DbOrTx): Promise<number> {
  const result = await acrossTenants(db, "the daily retention job forgets every tenant's runs past their year")
    .deleteFrom('retention_runs')
    .where('started_at', '<', sql<Date>`now() - ${RUN_RETENTION}::interval`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
