/**
 * Who is calling, and may they: the key (401; 429 once its address has failed too often, see auth-failures.ts),
 * the plan (403 plan_not_eligible), the budget (429) and the operation's scope from the contract (403
 * insufficient_scope), in that order. The operation is the one the router resolved (http/route.ts), so authentication
 * and dispatch cannot disagree. Runs before the body is
 * read: an unauthenticated request never has its body parsed. Keys are looked up through the per-process key
 * cache, which every process drops entries from when a key changes (LISTEN/NOTIFY), so a revocation takes
 * effect at once everywhere.
 */
import type { NextFunction, Request, Response } from 'express';
import { grants } from '../lib/scopes.js';
import type { AuthContext, KeyAuthority } from './auth-context.js';
import type { AuthFailures } from './auth-failures.js';
import type { OperationInfo } from './contract.js';
import { ApiError, insufficientScope, unauthenticated } from './errors.js';
import type { InFlightWork } from './in-flight.js';
import { headersOf, type RateLimits } from './rate-limit.js';

export function authenticate(deps: {
  rateLimits: RateLimits;
  keys: KeyAuthority;
  failures: AuthFailures;
  inFlight: InFlightWork;
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
    deps.keys.noteUse(auth);

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

async function identify(keys: KeyAuthority, req: Request): Promise<AuthContext> {
  const header = req.get('authorization');
  if (!header)
    throw unauthenticated('A valid API key is required: send Authorization: Bearer svc_live_… or svc_test_….');
  if (authorizationHeaders(req) > 1) throw unauthenticated('Send exactly one Authorization header.');
  // The token's own form is the key module's to judge (it refuses a malformed one with the same 401).
  return keys.identify(/^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? '');
}
