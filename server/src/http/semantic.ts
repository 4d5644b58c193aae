/**
 * One validation pass reports every problem: when the validator refuses a request, the operation's semantic
 * checks (those that need the database, such as answers against the survey's questions) still run on what was
 * sent, and their problems join the validator's in the same 400. A valid request gets the same checks from its
 * handler. Problems at a place the schema already reported are not repeated.
 */
import type { NextFunction, Request, Response } from 'express';
import type { AuthContext } from './authenticate.js';
import type { OperationId } from './contract.js';
import { validationFailed, type ErrorDetail } from './errors.js';
import type { Services } from './handler.js';

export type SemanticCheck = (input: { params: Record<string, string>; body: unknown; auth: AuthContext; services: Services }) => Promise<ErrorDetail[]>;
export type SemanticChecks = Partial<Record<OperationId, SemanticCheck>>;

interface ValidatorError {
  status?: number;
  errors?: Array<{ path?: string }>;
}

const overlaps = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && (a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`));

export function withSemanticChecks(checks: SemanticChecks, services: Services) {
  return async (error: unknown, req: Request, res: Response, next: NextFunction): Promise<void> => {
    const check = checks[res.locals.operationId as OperationId];
    const refusal = error as ValidatorError;
    if (!check || refusal?.status !== 400 || !Array.isArray(refusal.errors) || !res.locals.auth || typeof req.body !== 'object' || req.body === null) return next(error);
    let extra: ErrorDetail[];
    try {
      extra = await check({ params: (res.locals.pathParams ?? {}) as Record<string, string>, body: req.body, auth: res.locals.auth as AuthContext, services });
    } catch {
      return next(error); // the schema problems are answer enough
    }
    // Let the error handler translate the validator's issues, then append ours.
    res.locals.semanticProblems = extra.filter((problem) => !refusal.errors!.some((issue) => overlaps(normalise(issue.path), problem.path)));
    next(error);
  };
}

function normalise(path: string | undefined): string | undefined {
  if (!path) return undefined;
  return path.startsWith('/') ? path : `/${path.replace(/^\./, '').replace(/\./g, '/')}`;
}


