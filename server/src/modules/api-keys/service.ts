/** Maps `api_keys` rows to the contract's ApiKey. */
import type { components } from '../../generated/openapi.js';
import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../../db/schema.js';
import { iso } from '../../lib/time.js';
import { maskKey } from './key-material.js';

export type ApiKey = components['schemas']['ApiKey'];

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
