/** API key operations. The contract requires the `*` scope for all three. */
import { ApiError, insufficientScope, notFound } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { isId } from '../../lib/ids.js';
import { uncovered } from '../../lib/scopes.js';
import { findKey, insertKey, listKeys, revokeKey } from './repository.js';
import { toApiKey } from './service.js';

export const listApiKeys: Handler<'listApiKeys'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { rows, total } = await listKeys(deps.db, tenantOf(auth), {
    includeRevoked: query.includeRevoked ?? false,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: rows.map(toApiKey), pagination: paginationOf(page, total) };
};

export const createApiKey: Handler<'createApiKey'> = async ({ body, auth, deps }) => {
  const environment = body.environment ?? auth.environment;
  if (environment !== auth.environment) {
    throw new ApiError(
      403,
      'insufficient_scope',
      `A ${auth.environment} key can only create ${auth.environment} keys.`,
      [
        {
          path: '/body/environment',
          message: `must be ${auth.environment}, the environment of the calling key`,
          code: 'invalid_value',
        },
      ],
    );
  }
  const missing = uncovered(auth.scopes, body.scopes);
  if (missing.length > 0) {
    throw insufficientScope(`A key cannot grant scopes it does not hold: ${missing.join(', ')}.`, missing);
  }
  if (body.expiresAt && new Date(body.expiresAt).getTime() <= Date.now()) {
    throw new ApiError(400, 'validation_failed', 'The request is invalid: 1 problem found.', [
      { path: '/body/expiresAt', message: 'must be in the future', code: 'out_of_range' },
    ]);
  }
  const { row, key } = await insertKey(deps.db, {
    organizationId: auth.organizationId,
    environment,
    name: body.name,
    scopes: [...new Set(body.scopes)],
    expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
  });
  return { status: 201, data: { ...toApiKey(row), key } };
};

export const revokeApiKey: Handler<'revokeApiKey'> = async ({ params, auth, deps }) => {
  if (!isId('key', params.id)) throw notFound('API key', params.id);
  const existing = await findKey(deps.db, tenantOf(auth), params.id);
  if (!existing) throw notFound('API key', params.id);
  if (existing.revoked_at) return { status: 200, data: toApiKey(existing) };
  // The 200 promises that no API process accepts the key any more, not only this one.
  const drop = deps.keys.dropEverywhere(existing.key_hash);
  let row;
  try {
    row = await revokeKey(deps.db, tenantOf(auth), params.id);
  } catch (error) {
    drop.cancel();
    throw error;
  }
  if (!row) {
    drop.cancel();
    throw notFound('API key', params.id);
  }
  await drop.settled();
  return { status: 200, data: toApiKey(row) };
};
