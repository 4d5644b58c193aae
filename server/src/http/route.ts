/**
 * Routing, decided once per request before anything else looks at it: which documented operation this is
 * (`contract.resolve`, exact and case-sensitive), or 404 / 405 with `Allow`. Authentication, the body limits, the
 * validator and the handler all use this decision (the handler adapter checks that the validator agreed), so
 * no spelling of a path can reach a handler without the checks of its operation.
 *
 * A request that presents a key meets that key's checks (401, 403 plan, 429) before its 404 / 405, like any
 * request: otherwise another spelling of a path (`/API/V1/Surveys`) would reply 404 where the canonical one
 * replies 401 or 429 to the same key, and a key whose budget is spent would still get replies. Without a key, a
 * path or method no operation has is refused at once.
 */
import type { NextFunction, Request, Response } from 'express';
import { resolve, type OperationInfo, type RouteInfo } from './contract.js';
import { ApiError } from './errors.js';

export function routeRequest(routes: readonly RouteInfo[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const rawPath = req.originalUrl.split('?', 1)[0]!;
    const resolution = resolve(routes, req.method, rawPath);
    if (resolution.kind !== 'operation') {
      let refusal: ApiError;
      if (resolution.kind === 'not_found') {
        refusal = new ApiError(
          404,
          'not_found',
          'No such endpoint. Paths are case-sensitive and have no trailing slash; see /docs for the API reference.',
        );
      } else {
        res.locals.route = resolution.route.path;
        refusal = new ApiError(
          405,
          'method_not_allowed',
          `${req.method.slice(0, 16)} is not supported on ${resolution.route.path}; use ${resolution.route.allow}.`,
          undefined,
          {
            Allow: resolution.route.allow,
          },
        );
      }
      if (req.headers.authorization === undefined) throw refusal;
      res.locals.unrouted = refusal;
      return next();
    }
    res.locals.operation = resolution.operation;
    res.locals.operationId = resolution.operation.operationId;
    res.locals.route = resolution.operation.path;
    res.locals.pathParams = resolution.params;
    next();
  };
}

/** The operation of a routed request (every middleware after `refuseUnrouted` sees one). */
export function operationOf(res: Response): OperationInfo {
  return res.locals.operation as OperationInfo;
}

/** After authentication: the 404 / 405 of a request that presented a key (see above). */
export function refuseUnrouted(_req: Request, res: Response, next: NextFunction): void {
  const refusal = res.locals.unrouted as ApiError | undefined;
  if (refusal) throw refusal;
  next();
}
