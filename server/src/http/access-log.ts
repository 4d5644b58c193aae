/** One structured log line per request: no query strings, bodies or headers (they may carry personal data). */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';

export function accessLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      log.info(
        {
          requestId: res.locals.requestId,
          method: req.method,
          path: req.path,
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
