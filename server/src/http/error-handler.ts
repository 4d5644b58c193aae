/**
 * The single mapping from anything thrown to the error envelope. Our ApiErrors keep their code; the body
 * parser's and the validator's errors get theirs; anything else is an opaque 500 — logged with the request id,
 * never shown (no stack, SQL or internal names leave the process).
 */
import type { NextFunction, Request, Response } from 'express';
import { databaseUnavailable } from '../db/availability.js';
import type { Logger } from '../logger.js';
import { replyThenDrain } from './drain.js';
import { errorEnvelope, sendError } from './envelope.js';
import { ApiError, type ErrorDetail, serviceUnavailable, validationFailed } from './errors.js';

interface ValidatorIssue {
  path?: string;
  message?: string;
  errorCode?: string;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  errors?: ValidatorIssue[];
  message?: string;
  limit?: number;
}

/** express-openapi-validator reports `/body/title` or `.body.title`; the envelope speaks JSON Pointer. */
function pointer(path: string | undefined): string | undefined {
  if (!path) return undefined;
  return path.startsWith('/') ? path : `/${path.replace(/^\./, '').replace(/\./g, '/')}`;
}

/** JSON Schema keywords the validator reports, as the contract's snake_case detail codes. */
const keywordCodes: Record<string, string> = {
  additionalProperties: 'unknown_field',
  unevaluatedProperties: 'unknown_field',
  anyOf: 'any_of',
  oneOf: 'one_of',
  minLength: 'min_length',
  maxLength: 'max_length',
  minItems: 'min_items',
  maxItems: 'max_items',
  uniqueItems: 'unique_items',
  minProperties: 'min_properties',
  maxProperties: 'max_properties',
  exclusiveMinimum: 'minimum',
  exclusiveMaximum: 'maximum',
  propertyNames: 'pattern',
};

export function codeOf(issue: ValidatorIssue): string {
  const keyword = issue.errorCode?.replace(/\.openapi\.(validation|requestValidation)$/, '') ?? '';
  if (/^Unknown query parameter/i.test(issue.message ?? '')) return 'unknown_field';
  const code = keywordCodes[keyword] ?? keyword.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  return /^[a-z][a-z0-9_]*$/.test(code) ? code : 'invalid_value';
}

/**
 * `anyOf`/`oneOf` failures come with one error per branch at the same place ("must be string", "must be
 * number", …): the single any_of/one_of line says it better.
 */
function withoutBranchNoise(issues: ValidatorIssue[]): ValidatorIssue[] {
  const alternatives = new Set(
    issues.filter((issue) => /^(anyOf|oneOf)/.test(issue.errorCode ?? '')).map((issue) => issue.path),
  );
  return issues.filter(
    (issue) =>
      /^(anyOf|oneOf)/.test(issue.errorCode ?? '') ||
      !alternatives.has(issue.path) ||
      !/^(type|enum|const)\./.test(issue.errorCode ?? ''),
  );
}

/**
 * A tagged `oneOf` (discriminators.ts) whose tag names no branch is reported by Ajv at the object, as "value of tag
 * "type" must be in oneOf": it is the tag's value that is wrong, an `enum` problem at the tag.
 */
function atTheTag(issue: ValidatorIssue): ValidatorIssue {
  if (!issue.errorCode?.startsWith('discriminator.')) return issue;
  const tag = /tag "([^"]+)"/.exec(issue.message ?? '')?.[1];
  if (!tag) return issue;
  const at = pointer(issue.path) ?? '';
  return {
    path: `${at}/${tag}`,
    message: `must be one of the documented values of ${tag}`,
    errorCode: 'enum.openapi.validation',
  };
}

function translate(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  // Not logged per request: the database's going and coming back are one line each (db/availability.ts).
  if (databaseUnavailable(error)) return serviceUnavailable();
  const e = error as HttpLikeError;
  if (e?.type === 'entity.parse.failed')
    return new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
  if (e?.type === 'entity.too.large')
    return new ApiError(
      413,
      'payload_too_large',
      `The request body exceeds ${e.limit ?? 'the'} bytes allowed for this route.`,
    );
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported')
    return new ApiError(415, 'unsupported_media_type', 'Send the body as UTF-8 application/json.');
  const status = e?.status ?? e?.statusCode;
  if (typeof status !== 'number' || status >= 500) return undefined;
  switch (status) {
    case 400: {
      const details: ErrorDetail[] = withoutBranchNoise((e.errors ?? []).map(atTheTag)).map((issue) => {
        const detail: ErrorDetail = { message: issue.message ?? 'is invalid', code: codeOf(issue) };
        const path = pointer(issue.path);
        if (path) detail.path = path;
        return detail;
      });
      return validationFailed(
        details.length > 0 ? details : [{ message: e.message ?? 'invalid request', code: 'invalid_value' }],
      );
    }
    case 404:
      return new ApiError(404, 'not_found', 'No such endpoint. See /docs for the API reference.');
    case 405:
      return new ApiError(405, 'method_not_allowed', 'This endpoint does not support that method.');
    case 413:
      return new ApiError(413, 'payload_too_large', 'The request body is too large for this route.');
    case 415:
      return new ApiError(415, 'unsupported_media_type', 'Send the body as application/json.');
    default:
      return undefined;
  }
}

/** Problems found before the validator (characters, depth) are listed together with the validator's. */
function withEarlierProblems(error: ApiError, res: Response): ApiError {
  const earlier = [
    ...((res.locals.problems as ErrorDetail[] | undefined) ?? []),
    ...((res.locals.semanticProblems as ErrorDetail[] | undefined) ?? []),
  ];
  if (!earlier.length || error.status !== 400 || error.code !== 'validation_failed') return error;
  // An earlier problem is the more precise one: the validator's at the same place give way to it.
  const details = (error.details ?? []).filter(
    (detail) => !earlier.some((problem) => problem.path !== undefined && problem.path === detail.path),
  );
  for (const problem of earlier)
    if (!details.some((d) => d.path === problem.path && d.code === problem.code)) details.push(problem);
  return validationFailed(details);
}

/** What anything thrown means to the client, logged as the error handler logs it (the SCIM server renders it too). */
export function apiErrorOf(error: unknown, res: Response, log: Logger): ApiError {
  let apiError = translate(error);
  if (apiError) apiError = withEarlierProblems(apiError, res);
  if (!apiError) {
    log.error({ err: error, requestId: res.locals.requestId }, 'unexpected error');
    apiError = new ApiError(
      500,
      'internal_error',
      'An unexpected error occurred. Quote the request id when you contact support.',
    );
  }
  return apiError;
}

export function errorHandler(log: Logger) {
  // Express recognises error middleware by its four parameters.
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const apiError = apiErrorOf(error, res, log);
    if (res.headersSent) {
      res.end();
      return;
    }
    // A body not read to its end (refused from the headers, or at the limit) is drained, within bounds, after
    // the reply: closing at once would reset the connection before a client still sending reads it.
    if (!req.complete) replyThenDrain(req, res, errorEnvelope(res, apiError));
    else sendError(res, apiError);
  };
}
