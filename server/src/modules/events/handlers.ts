/** `listEvents`: the tenant's events, newest first, kept 30 days. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import * as service from './service.js';

export const listEvents: Handler<'listEvents'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { events, total } = await service.listEvents(deps.db, tenantOf(auth), {
    type: query.type,
    createdAfter: query.createdAfter ? new Date(query.createdAfter) : undefined,
    createdBefore: query.createdBefore ? new Date(query.createdBefore) : undefined,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: events, pagination: paginationOf(page, total) };
};
