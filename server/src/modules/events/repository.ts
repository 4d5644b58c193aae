/** All SQL of reading and expiring events. */
import { sql } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import { deleteExpiredInSlices } from '../../db/expiry.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import type { EventType } from './tables.js';

export interface EventFilter {
  type?: EventType;
  createdAfter?: Date;
  createdBefore?: Date;
  limit: number;
  offset: number;
}

export async function listEvents(db: DbOrTx, tenant: Tenant, filter: EventFilter) {
  let query = db.selectFrom('events').where(tenantIs(tenant));
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.createdAfter) query = query.where('created_at', '>=', filter.createdAfter);
  if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
  const [rows, count] = await Promise.all([
    query
      .select(['id', 'type', 'data', 'created_at'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Deletes events older than `days` (their deliveries go with them), in slices so no transaction grows large. */
export function deleteExpiredEvents(db: Db, days: number): Promise<number> {
  return deleteExpiredInSlices(
    db,
    'events',
    sql`created_at < now() - make_interval(days => ${days})`,
    "the events.cleanup job expires every tenant's old events",
  );
}

/** Events of one tenant created before `before` (retention): how many, or deleted, at most `limit` of them. */
export async function countEventsBefore(db: DbOrTx, tenant: Tenant, before: Date): Promise<number> {
  const row = await db
    .selectFrom('events')
    .where(tenantIs(tenant))
    .where('created_at', '<', before)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes at most `limit` of the tenant's events created before `before`, with their deliveries; how many. */
export async function deleteEventsBefore(db: DbOrTx, tenant: Tenant, before: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from events where ${tenantIs(tenant)} and id in (
      select id from events where ${tenantIs(tenant)} and created_at < ${before} order by created_at limit ${limit})`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}
