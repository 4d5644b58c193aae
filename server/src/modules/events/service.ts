/** Reading the tenant's events, newest first, and how long they are kept. */
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { Event } from './record.js';
import { listEvents as selectEvents, type EventFilter } from './repository.js';

/** How long events (and their deliveries) are kept; the events cleanup job deletes older ones. */
export const EVENT_RETENTION_DAYS = 30;

export async function listEvents(
  db: DbOrTx,
  tenant: Tenant,
  filter: EventFilter,
): Promise<{ events: Event[]; total: number }> {
  const { rows, total } = await selectEvents(db, tenant, filter);
  const events = rows.map(
    (row) => ({ id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data }) as Event,
  );
  return { events, total };
}
