/**
 * SCIM errors (RFC 7644 §3.12): `{ schemas, status: "400", scimType?, detail }` as `application/scim+json`, for
 * every refusal of a SCIM operation — the handlers' own and the pipeline's (authentication, rate limits, body limits,
 * the contract's validation), which arrive as the API's `ApiError`s and are rendered here instead of the envelope.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../logger.js';
import { ApiError, apiErrorOf, sendThenDrain, withinLength, type BareReply } from '../../http/index.js';

export const scimMediaType = 'application/scim+json';
export const errorSchema = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue';

export interface ScimErrorBody {
  schemas: [typeof errorSchema];
  status: string;
  scimType?: ScimType;
  detail?: string;
}

/** A refusal of the SCIM server: thrown by its code, replied as a SCIM error. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: ScimType | undefined,
    detail: string,
  ) {
    super(withinLength(detail, 2_000));
    this.name = 'ScimError';
  }

  get body(): ScimErrorBody {
    return {
      schemas: [errorSchema],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.message,
    };
  }
}

export const invalidValue = (detail: string) => new ScimError(400, 'invalidValue', detail);
export const invalidPath = (detail: string) => new ScimError(400, 'invalidPath', detail);
export const invalidFilter = (detail: string) => new ScimError(400, 'invalidFilter', detail);
export const noTarget = (detail: string) => new ScimError(400, 'noTarget', detail);
export const mutability = (detail: string) => new ScimError(400, 'mutability', detail);
export const uniqueness = (detail: string) => new ScimError(409, 'uniqueness', detail);
export const userNotFound = (id: string) =>
  new ScimError(404, undefined, `No user ${id.length > 80 ? `${id.slice(0, 80)}…` : id} exists.`);

/** The API's refusal in SCIM's terms: the message and every detail, and the scimType its status implies. */
export function fromApiError(error: ApiError): ScimError {
  const details = (error.details ?? []).map((d) => (d.path ? `${d.path}: ${d.message}` : d.message));
  const detail = details.length > 0 ? `${error.message} ${details.join('; ')}` : error.message;
  let scimType: ScimType | undefined;
  if (error.status === 413) scimType = 'tooMany';
  else if (error.status === 400)
    scimType = error.code === 'invalid_json' || error.code === 'validation_failed' ? 'invalidSyntax' : 'invalidValue';
  if (error.status === 400 && (error.details ?? []).some((d) => d.path?.startsWith('/body') === false))
    scimType = 'invalidValue';
  return new ScimError(error.status, scimType, detail);
}

/** Anything a SCIM handler throws, as its reply: SCIM errors and the API's refusals; the rest is thrown on. */
export function errorReply(error: unknown): BareReply {
  const scim =
    error instanceof ScimError
      ? error
      : error instanceof ApiError && error.status < 500
        ? fromApiError(error)
        : undefined;
  if (!scim) throw error;
  return { status: scim.status, bare: scim.body, contentType: scimMediaType };
}

/**
 * Whether a request's raw path (as sent, before any decoding) names the SCIM base URL or something below it, however
 * it is spelled: escapes of ASCII characters decoded (`%2F` is a slash, `%76` a `v`), empty and `.` segments skipped,
 * `..` segments resolved. `/scim/v2//Users`, `/scim/v2%2FUsers`, `/scim/./v2/Users` and `/api/../scim/v2/Nope` are
 * all under it, and routing refuses each of them (contract.ts). Letter case counts, as everywhere: `/SCIM/v2/Users`
 * is not.
 */
export function underScimBase(rawPath: string): boolean {
  // A request target in absolute form (`http://host/scim/v2/Users`) names the path after its authority.
  const path = rawPath.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/, '');
  const decoded = path.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const segments: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return segments[0] === 'scim' && segments[1] === 'v2';
}

/** Error middleware for the SCIM operations: the API's refusals and failures, rendered as SCIM errors. */
export function scimErrors(log: Logger) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    // Every refusal under the SCIM base URL, routed or not, in any spelling: an identity provider that meets an
    // unknown path or method (404, 405), a URL over the limit (414) or a refused key there (401, 403, 429) reads
    // SCIM's error, not the envelope. Paths are case-sensitive, so `/SCIM/v2/…` is no SCIM path (the envelope's 404).
    const operation = res.locals.operation as { path?: string } | undefined;
    const underScim = operation?.path?.startsWith('/scim/v2/') ?? underScimBase(req.originalUrl.split('?', 1)[0]!);
    if (!underScim || res.headersSent) return next(error);
    let scim: ScimError;
    if (error instanceof ScimError) scim = error;
    else {
      const apiError = apiErrorOf(error, res, log);
      for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
      scim = fromApiError(apiError);
    }
    res.status(scim.status);
    if (!req.complete) return sendThenDrain(req, res, JSON.stringify(scim.body), `${scimMediaType}; charset=utf-8`);
    res.setHeader('Content-Type', `${scimMediaType}; charset=utf-8`);
    res.json(scim.body);
  };
}
