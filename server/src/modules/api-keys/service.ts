/**
 * API keys: the rules of issuing and revoking them, and the mapping of `api_keys` rows to the contract's ApiKey.
 */
import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../../db/schema.js';
import type { Tenant } from '../../db/tenant.js';
import type { ApiKey, ApiKeyCreate, ApiKeyCreated } from '../../generated/openapi.js';
import type { KeyCache } from './key-cache.js';
import { ApiError, idOrNotFound, insufficientScope, notFound } from '../../http/index.js';
import type { Db } from '../../db/database.js';
import { uncovered } from '../../lib/scopes.js';
import { iso } from '../../lib/time.js';
import { maskKey } from './key-material.js';
import { findKey, insertKey, listKeys, revokeKey } from './repository.js';

export type { ApiKey };

export function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    name: row.name,
    environment: row.environment,
    scopes: row.scopes as ApiKey['scopes'],
    maskedKey: maskKey(row.environment, row.last4),
    last4: row.last4,
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
  };
}

export async function listApiKeys(
  db: Db,
  tenant: Tenant,
  options: { includeRevoked: boolean; limit: number; offset: number },
): Promise<{ keys: ApiKey[]; total: number }> {
  const { rows, total } = await listKeys(db, tenant, options);
  return { keys: rows.map(toApiKey), total };
}

/** A key can only be created in the caller's environment, with scopes the caller holds, expiring in the future. */
export async function createApiKey(
  db: Db,
  auth: { organizationId: string; environment: Tenant['environment']; scopes: readonly string[] },
  body: ApiKeyCreate,
): Promise<ApiKeyCreated> {
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
  const { row, key } = await insertKey(db, {
    organizationId: auth.organizationId,
    environment,
    name: body.name,
    scopes: [...new Set(body.scopes)],
    expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
  });
  return { ...toApiKey(row), key };
}

/** Revoked once every API process has dropped the key (the reply promises that no process accepts it any more). */
/** `audit`: written in the revocation's transaction (a key already revoked changes nothing and writes nothing). */
export async function revokeApiKey(
  db: Db,
  keys: Pick<KeyCache, 'dropEverywhere'>,
  tenant: Tenant,
  id: string,
  audit?: (tx: Db) => Promise<void>,
): Promise<ApiKey> {
  idOrNotFound('key', 'API key', id);
  const existing = await findKey(db, tenant, id);
  if (!existing) throw notFound('API key', id);
  if (existing.revoked_at) return toApiKey(existing);
  const drop = keys.dropEverywhere(existing.key_hash);
  let row;
  try {
    row = await revokeKey(db, tenant, id, audit);
  } catch (error) {
    drop.cancel();
    throw error;
  }
  if (!row) {
    drop.cancel();
    throw notFound('API key', id);
  }
  await drop.settled();
  return toApiKey(row);
}
