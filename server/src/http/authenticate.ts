/**
 * Who is calling, and may they: the key (401; 429 once its address has failed too often, see auth-failures.ts),
 * the plan (403 plan_not_eligible), the budget (429) and the operation's scope from the contract (403
 * insufficient_scope), in that order. The operation is the one the router resolved (http/route.ts), so authentication
 * and dispatch cannot disagree. Runs before the body is
 * read: an unauthenticated request never has its body parsed. Keys are looked up through the per-process key
 * cache, which every process drops entries from when a key changes (LISTEN/NOTIFY), so a revocation takes
 * effect at once everywhere.
 */
import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Db } from '../db/database.js';
import type { DatabaseAvailability } from '../db/availability.js';
import type { Environment, Plan } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { grants } from '../lib/scopes.js';
import { touchKey } from '../modules/api-keys/index.js';
import { hashKey, keyFormat } from '../modules/api-keys/index.js';
import type { AuthFailures } from './auth-failures.js';
import type { OperationInfo } from './contract.js';
import { ApiError, insufficientScope, unauthenticated } from './errors.js';
import type { InFlightWork } from './in-flight.js';
import type { KeyCache } from '../modules/api-keys/index.js';
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

export function authenticate(deps: {
  counters: Db;
  rateLimits: RateLimits;
  keys: KeyCache;
  failures: AuthFailures;
  log: Logger;
  inFlight: InFlightWork;
  availability: DatabaseAvailability;
}) {
  return (req: Request, res: Response, next: NextFunction): Promise<void> =>
    deps.inFlight.run(() => check(req, res, next));

  async function check(req: Request, res: Response, next: NextFunction): Promise<void> {
    // No operation: a path or method none has, presented with a key (http/route.ts); any valid key passes here.
    const operation = res.locals.operation as OperationInfo | undefined;
    if (operation?.requiredScopes === null) return next(); // public

    let auth: AuthContext;
    try {
      auth = await identify(deps.keys, req);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      // The failures of an address are throttled, never its valid keys (auth-failures.ts): the key is looked up
      // whatever the address's count, and only a failure beyond the budget is replied 429 instead of 401.
      const source = req.socket.remoteAddress ?? 'unknown';
      const refusal = deps.failures.refusal(source);
      deps.failures.record(source);
      throw refusal ?? error;
    }
    res.locals.auth = auth;
    if (auth.plan !== 'PRO' && auth.plan !== 'BUSINESS') {
      throw new ApiError(
        403,
        'plan_not_eligible',
        `The ${auth.plan} plan has no API access; upgrade to PRO or BUSINESS.`,
      );
    }
    // The lookup already read last_used_at: write only when it is a minute old, not on every request.
    if (!auth.lastUsedAt || Date.now() - auth.lastUsedAt.getTime() > 60_000) {
      auth.lastUsedAt = new Date();
      deps.keys.touched(auth.apiKeyId);
      touchKey(deps.counters, auth.apiKeyId).catch((error: unknown) => {
        // The database gone is logged once, by the availability.
        if (!deps.availability.failed(error, 'key use')) deps.log.warn({ err: error }, 'could not record key use');
      });
    }

    const window = await deps.rateLimits.consume(auth);
    for (const [name, value] of Object.entries(headersOf(window))) res.setHeader(name, value);

    const missing = (operation?.requiredScopes ?? []).filter((scope) => !grants(auth.scopes, scope));
    if (missing.length > 0) {
      throw insufficientScope(
        `This API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' and ')}.`,
        missing,
      );
    }
    next();
  }
}

/** How many `Authorization` headers the request carried (Node keeps only the first). */
function authorizationHeaders(req: Request): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'authorization') count++;
  return count;
}

async function identify(keys: KeyCache, req: Request): Promise<AuthContext> {
  const header = req.get('authorization');
  if (!header)
    throw unauthenticated('A valid API key is required: send Authorization: Bearer svc_live_… or svc_test_….');
  if (authorizationHeaders(req) > 1) throw unauthenticated('Send exactly one Authorization header.');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  if (!key || !keyFormat.test(key)) {
    throw unauthenticated(
      'The Authorization header must be "Bearer " followed by a key of the form svc_live_<64 hex> or svc_test_<64 hex>.',
    );
  }
  const presentedHash = hashKey(key);
  const row = await keys.find(presentedHash);
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
