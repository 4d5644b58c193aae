/** `listEvents`: the tenant's events, newest first, kept 30 days. */
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import type { Event } from './record.js';
import { listEvents as selectEvents } from './repository.js';

/** How long events (and their deliveries) are kept; jobs/events.cleanup.ts deletes older ones. */
export const EVENT_RETENTION_DAYS = 30;

export const listEvents: Handler<'listEvents'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { rows, total } = await selectEvents(deps.db, tenantOf(auth), {
    type: query.type,
    createdAfter: query.createdAfter ? new Date(query.createdAfter) : undefined,
    createdBefore: query.createdBefore ? new Date(query.createdBefore) : undefined,
    limit: page.pageSize,
    offset: page.offset,
  });
  const data = rows.map(
    (row) => ({ id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data }) as Event,
  );
  return { status: 200, data, pagination: paginationOf(page, total) };
};
