/** All SQL on `audit_log`. Every query is scoped by organization and environment, but the expiry's. */
import { sql, type Selectable } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import { deleteExpiredInSlices } from '../../db/expiry.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import type { AuditAction, AuditLogTable } from './tables.js';

export type AuditRow = Selectable<AuditLogTable>;

export async function insertEntry(db: DbOrTx, row: Omit<AuditRow, 'occurred_at'>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export interface EntryFilters {
  action?: AuditAction;
  /** A key id, or `system`. */
  actor?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
}

/**
 * One page in id order: `direction` `desc` (newest first) or `asc`, after `afterId` in that direction. `limit + 1`
 * rows are read so the caller can tell whether more follow.
 */
export async function listEntries(
  db: DbOrTx,
  tenant: Tenant,
  filters: EntryFilters,
  page: { direction: 'asc' | 'desc'; afterId?: string; limit: number },
): Promise<AuditRow[]> {
  let query = db.selectFrom('audit_log').selectAll().where(tenantIs(tenant));
  if (filters.action !== undefined) query = query.where('action', '=', filters.action);
  if (filters.actor === 'system') query = query.where('actor_type', '=', 'system');
  else if (filters.actor !== undefined) query = query.where('actor_key_id', '=', filters.actor);
  if (filters.targetId !== undefined) query = query.where('target_id', '=', filters.targetId);
  if (filters.from !== undefined) query = query.where('occurred_at', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('occurred_at', '<', filters.to);
  if (page.afterId !== undefined) query = query.where('id', page.direction === 'desc' ? '<' : '>', page.afterId);
  return query
    .orderBy('id', page.direction)
    .limit(page.limit + 1)
    .execute();
}

/**
 * The daily expiry: entries older than a year, in slices. The same condition as the table's trigger, which lets
 * only these go.
 */
export function deleteExpiredEntries(db: Db): Promise<number> {
  return deleteExpiredInSlices(
    db,
    'audit_log',
    sql`occurred_at < now() - interval '1 year'`,
    "the audit.cleanup job expires every tenant's year-old entries",
  );
}
