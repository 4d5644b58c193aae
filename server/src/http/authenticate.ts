/**
 * Who is calling, and may they: the key (401), the plan (403 plan_not_eligible), the budget (429) and the
 * operation's scope from the contract (403 insufficient_scope), in that order. Every request looks its key
 * up in PostgreSQL, so a revocation takes effect at once in every process.
 */
import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Db } from '../db/database.js';
import type { Environment, Plan } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { grants } from '../lib/scopes.js';
import { findKeyByHash, touchKey } from '../modules/api-keys/repository.js';
import { hashKey, keyFormat } from '../modules/api-keys/key-material.js';
import { findOperation, type OperationInfo } from './contract.js';
import { ApiError, insufficientScope, unauthenticated } from './errors.js';
import type { InFlightWork } from './in-flight.js';
import { headersOf, type RateLimits } from './rate-limit.js';

export interface AuthContext {
  organizationId: string;
  organizationName: string;
  plan: Plan;
  environment: Environment;
  apiKeyId: string;
  apiKeyName: string;
  scopes: string[];
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
}

export function authenticate(deps: { db: Db; counters: Db; rateLimits: RateLimits; operations: readonly OperationInfo[]; log: Logger; inFlight: InFlightWork }) {
  return (req: Request, res: Response, next: NextFunction): Promise<void> => deps.inFlight.run(() => check(req, res, next));

  async function check(req: Request, res: Response, next: NextFunction): Promise<void> {
    const operation = findOperation(deps.operations, req.method, req.path);
    if (!operation) return next(); // unknown route: the validator answers 404/405
    res.locals.operationId = operation.operationId;
    if (operation.requiredScope === null) return next(); // public

    const auth = await identify(deps.db, req.get('authorization'));
    res.locals.auth = auth;
    if (auth.plan !== 'PRO' && auth.plan !== 'BUSINESS') {
      throw new ApiError(403, 'plan_not_eligible', `The ${auth.plan} plan has no API access; upgrade to PRO or BUSINESS.`);
    }
    // The lookup already read last_used_at: write only when it is a minute old, not on every request.
    if (!auth.lastUsedAt || Date.now() - auth.lastUsedAt.getTime() > 60_000) {
      touchKey(deps.counters, auth.apiKeyId).catch((error: unknown) => deps.log.warn({ err: error }, 'could not record key use'));
    }

    const window = await deps.rateLimits.consume(auth);
    for (const [name, value] of Object.entries(headersOf(window))) res.setHeader(name, value);

    if (operation.requiredScope && !grants(auth.scopes, operation.requiredScope)) {
      throw insufficientScope(`This API key lacks the scope ${operation.requiredScope}.`, [operation.requiredScope]);
    }
    next();
  }
}

async function identify(db: Db, header: string | undefined): Promise<AuthContext> {
  if (!header) throw unauthenticated('A valid API key is required: send Authorization: Bearer svc_live_… or svc_test_….');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  if (!key || !keyFormat.test(key)) {
    throw unauthenticated('The Authorization header must be "Bearer " followed by a key of the form svc_live_<64 hex> or svc_test_<64 hex>.');
  }
  const presentedHash = hashKey(key);
  const row = await findKeyByHash(db, presentedHash);
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(presentedHash, 'hex'))) {
    throw unauthenticated('This API key is not valid.');
  }
  if (row.revoked_at) throw unauthenticated('This API key has been revoked.');
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw unauthenticated('This API key has expired.');
  return {
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    plan: row.plan,
    environment: row.environment,
    apiKeyId: row.id,
    apiKeyName: row.name,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    rateLimitPerMinute: row.rate_limit_per_minute,
    rateLimitPerDay: row.rate_limit_per_day,
  };
}
