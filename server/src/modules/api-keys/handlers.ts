/** API key operations. The contract requires the `*` scope for all three. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import { auditSourceOf, recordAudit } from '../audit/index.js';
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

// The key and its audit entry commit together (a savepoint of a keyed POST's own transaction).
export const createApiKey: Handler<'createApiKey'> = async (input) => {
  const { body, auth, deps } = input;
  const created = await deps.db.transaction().execute(async (tx) => {
    const key = await service.createApiKey(tx, auth, body);
    await recordAudit(tx, auditSourceOf(input), { action: 'api_key.created', target: { type: 'api_key', id: key.id } });
    return key;
  });
  return { status: 201, data: created };
};

export const revokeApiKey: Handler<'revokeApiKey'> = async (input) => {
  const { params, auth, deps } = input;
  const source = auditSourceOf(input);
  const revoked = await service.revokeApiKey(deps.db, deps.keys, tenantOf(auth), params.id, (tx) =>
    recordAudit(tx, source, { action: 'api_key.revoked', target: { type: 'api_key', id: params.id } }),
  );
  return { status: 200, data: revoked };
};
