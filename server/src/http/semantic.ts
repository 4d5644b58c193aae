/**
 * One validation pass reports every problem: when a request is refused before its handler — by the validator,
 * or by the earlier checks of characters (NUL, lone surrogates) — the operation's semantic checks (those the
 * schema cannot express: answers against the survey's questions, unique question ids) still run on what was
 * sent, and their problems join the others in the same 400. A valid request gets the same checks from its
 * handler. A semantic problem is left out only where a problem already reported covers it: at the same place
 * (an NPS answer of 11 is reported once) or at an enclosing one (an answer the schema found malformed as a
 * whole). A problem found inside a place says nothing about the place itself, so a missing required answer
 * (`/body/answers`) is reported next to wrong values at `/body/answers/0/value`.
 */
import type { NextFunction, Request, Response } from 'express';
import type { AuthContext } from './auth-context.js';
import type { OperationId } from './contract.js';
import { ApiError, type ErrorDetail } from './errors.js';
import type { Dependencies } from '../dependencies.js';
import { tooDeep } from './input-checks.js';

export type SemanticCheck = (input: {
  params: Record<string, string>;
  body: unknown;
  auth: AuthContext;
  deps: Dependencies;
}) => Promise<ErrorDetail[]>;
export type SemanticChecks = Partial<Record<OperationId, SemanticCheck>>;

interface ValidatorError {
  status?: number;
  errors?: Array<{ path?: string }>;
}

/** Whether a problem reported at `reported` covers one at `path`: the same place, or one enclosing it. */
const covers = (reported: string | undefined, path: string | undefined) =>
  reported !== undefined && path !== undefined && (path === reported || path.startsWith(`${reported}/`));

export function withSemanticChecks(checks: SemanticChecks, deps: Dependencies) {
  return async (error: unknown, req: Request, res: Response, next: NextFunction): Promise<void> => {
    const check = checks[res.locals.operationId as OperationId];
    const earlier = (res.locals.problems as ErrorDetail[] | undefined) ?? [];
    const refusal = error as ValidatorError;
    // The validator's refusal, or the handler adapter's refusal of the earlier checks' problems (the handler did not
    // run).
    const validator = !(error instanceof ApiError) && refusal?.status === 400 && Array.isArray(refusal.errors);
    const early = error instanceof ApiError && error.code === 'validation_failed' && earlier.length > 0;
    if (
      !check ||
      !(validator || early) ||
      tooDeep(earlier) ||
      !res.locals.auth ||
      typeof req.body !== 'object' ||
      req.body === null
    )
      return next(error);
    let extra: ErrorDetail[];
    try {
      extra = await check({
        params: (res.locals.pathParams ?? {}) as Record<string, string>,
        body: req.body,
        auth: res.locals.auth as AuthContext,
        deps,
      });
    } catch {
      return next(error); // the problems already found are the whole reply
    }
    const reported = [
      ...(validator ? refusal.errors!.map((issue) => normalise(issue.path)) : []),
      ...earlier.map((problem) => problem.path),
    ];
    // Let the error handler translate the validator's issues, then append ours.
    res.locals.semanticProblems = extra.filter((problem) => !reported.some((place) => covers(place, problem.path)));
    next(error);
  };
}

function normalise(path: string | undefined): string | undefined {
  if (!path) return undefined;
  return path.startsWith('/') ? path : `/${path.replace(/^\./, '').replace(/\./g, '/')}`;
}
