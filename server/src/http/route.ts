/**
 * Routing, decided once per request before anything else looks at it: which documented operation this is
 * (`contract.resolve`, exact and case-sensitive), or 404 / 405 with `Allow`. Authentication, the body limits, the
 * validator and the handler all use this decision (the handler adapter checks that the validator agreed), so
 * no spelling of a path can reach a handler without the checks of its operation.
 */
import type { NextFunction, Request, Response } from 'express';
import { resolve, type OperationInfo, type RouteInfo } from './contract.js';
import { ApiError } from './errors.js';

export function routeRequest(routes: readonly RouteInfo[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const rawPath = req.originalUrl.split('?', 1)[0]!;
    const resolution = resolve(routes, req.method, rawPath);
    if (resolution.kind === 'not_found') throw new ApiError(404, 'not_found', 'No such endpoint. Paths are case-sensitive and have no trailing slash; see /docs for the API reference.');
    if (resolution.kind === 'method_not_allowed') {
      res.locals.route = resolution.route.path;
      throw new ApiError(405, 'method_not_allowed', `${req.method.slice(0, 16)} is not supported on ${resolution.route.path}; use ${resolution.route.allow}.`, undefined, {
        Allow: resolution.route.allow,
      });
    }
    res.locals.operation = resolution.operation;
    res.locals.operationId = resolution.operation.operationId;
    res.locals.route = resolution.operation.path;
    res.locals.pathParams = resolution.params;
    next();
  };
}

export function operationOf(res: Response): OperationInfo {
  return res.locals.operation as OperationInfo;
}
