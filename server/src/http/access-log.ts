/**
 * One structured log line per request. It records the route template (`/api/v1/respondents/{externalId}`) and
 * the ids of our own that the path carried (`srv_…`, `key_…`), never the path itself: paths can carry customer
 * identifiers (an `externalId`, an e-mail address). No query strings, bodies or headers either.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';

const ownId = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;

function ownIds(params: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!params) return undefined;
  const ids = Object.entries(params).filter(([, value]) => ownId.test(value));
  return ids.length > 0 ? Object.fromEntries(ids) : undefined;
}

export function accessLog(log: Logger) {
  // The level is fixed at start: below `info` (LOG_LEVEL=warn) a request costs no listener and no line.
  if (!log.isLevelEnabled('info')) return (_req: Request, _res: Response, next: NextFunction): void => next();
  return (_req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const method = _req.method.slice(0, 16);
    res.on('finish', () => {
      log.info(
        {
          requestId: res.locals.requestId,
          method,
          route: res.locals.route ?? null,
          ids: ownIds(res.locals.pathParams as Record<string, string> | undefined),
          operationId: res.locals.operationId,
          organizationId: res.locals.auth?.organizationId,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'request',
      );
    });
    next();
  };
}
