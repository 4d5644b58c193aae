/** API key operations. The contract requires the `*` scope for all three. */
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import * as service from './service.js';

export const listApiKeys: Handler<'listApiKeys'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { keys, total } = await service.listApiKeys(deps.db, tenantOf(auth), {
    includeRevoked: query.includeRevoked ?? false,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: keys, pagination: paginationOf(page, total) };
};

export const createApiKey: Handler<'createApiKey'> = async ({ body, auth, deps }) => ({
  status: 201,
  data: await service.createApiKey(deps.db, auth, body),
});

export const revokeApiKey: Handler<'revokeApiKey'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.revokeApiKey(deps.db, deps.keys, tenantOf(auth), params.id),
});
