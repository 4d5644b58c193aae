/** All SQL on `api_keys`. Every query that serves a caller is scoped by organization and environment. */
import { sql } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Environment, Plan } from '../../db/schema.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import { newId } from '../../lib/ids.js';
import { announceKeyChange } from './announce.js';
import { environmentOfKey, generateKey, hashKey } from './key-material.js';

export interface KeyWithOrganization {
  id: string;
  organization_id: string;
  environment: Environment;
  name: string;
  scopes: string[];
  key_hash: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  organization_name: string;
  plan: Plan;
  rate_limit_per_minute: number | null;
  rate_limit_per_day: number | null;
}

export function findKeyByHash(db: DbOrTx, keyHash: string): Promise<KeyWithOrganization | undefined> {
  return acrossTenants(db, 'authentication: the key a caller presents is what tells its tenant')
    .selectFrom('api_keys')
    .innerJoin('organizations', 'organizations.id', 'api_keys.organization_id')
    .select([
      'api_keys.id',
      'api_keys.organization_id',
      'api_keys.environment',
      'api_keys.name',
      'api_keys.scopes',
      'api_keys.key_hash',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'organizations.name as organization_name',
      'organizations.plan',
      'organizations.rate_limit_per_minute',
      'organizations.rate_limit_per_day',
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Records use at most once a minute per key, so a busy key does not turn every read into a write. */
export async function touchKey(db: DbOrTx, id: string): Promise<void> {
  await acrossTenants(db, 'the authenticated key itself, by its id (the primary key)')
    .updateTable('api_keys')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]),
    )
    .execute();
}

export interface NewKey {
  organizationId: string;
  environment: Environment;
  name: string;
  scopes: string[];
  expiresAt?: Date | null;
}

/** Inserts a key and returns its row and the one-time full value. */
export async function insertKey(db: DbOrTx, input: NewKey) {
  const key = generateKey(input.environment);
  if (environmentOfKey(key) !== input.environment) throw new Error('unreachable: key prefix and environment disagree');
  const row = await db
    .insertInto('api_keys')
    .values({
      id: newId('key'),
      ...tenantColumns(input),
      name: input.name,
      key_hash: hashKey(key),
      last4: key.slice(-4),
      scopes: input.scopes,
      expires_at: input.expiresAt ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, key };
}

export async function listKeys(
  db: DbOrTx,
  tenant: Tenant,
  options: { includeRevoked: boolean; limit: number; offset: number },
) {
  let query = db.selectFrom('api_keys').where(tenantIs(tenant));
  if (!options.includeRevoked) query = query.where('revoked_at', 'is', null);
  const [rows, total] = await Promise.all([
    query
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .offset(options.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export function findKey(db: DbOrTx, tenant: Tenant, id: string) {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).where(tenantIs(tenant)).executeTakeFirst();
}

/**
 * Revokes once (an already revoked key keeps its first `revoked_at`), announced to every key cache. `onRevoked`
 * runs in the revocation's transaction when it revoked the key (its audit entry).
 */
export async function revokeKey(db: Db, tenant: Tenant, id: string, onRevoked?: (tx: Db) => Promise<void>) {
  return db.transaction().execute(async (tx) => {
    const revoked = await tx
      .updateTable('api_keys')
      .set({ revoked_at: sql`now()` })
      .where('id', '=', id)
      .where(tenantIs(tenant))
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .executeTakeFirst();
    if (revoked) {
      await announceKeyChange(tx, revoked.key_hash);
      await onRevoked?.(tx);
    }
    return findKey(tx, tenant, id);
  });
}

/** The admin CLI's revocation, announced to every key cache like the API's. */
export async function revokeKeyById(db: Db, id: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const revoked = await acrossTenants(tx, "the admin CLI: an operator revokes any organization's key by its id")
      .updateTable('api_keys')
      .set({ revoked_at: sql`now()` })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .executeTakeFirst();
    if (revoked) await announceKeyChange(tx, revoked.key_hash);
    return revoked !== undefined;
  });
}
