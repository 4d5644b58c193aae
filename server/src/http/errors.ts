/**
 * The one error type handlers throw. The error middleware turns it into the envelope's `error` member; every
 * other exception becomes an opaque 500 with the request id, logged but never shown.
 */
import type { ErrorCode, ErrorDetail } from '../generated/openapi.js';
import { isId, type IdPrefix } from '../lib/ids.js';

export type { ErrorCode, ErrorDetail };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers (Retry-After, WWW-Authenticate). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Ids are echoed shortened: a message stays readable and within the contract's bounds whatever was sent. */
const shown = (id: string) => (id.length > 80 ? `${id.slice(0, 80)}…` : id);

export const notFound = (what: string, id: string) => new ApiError(404, 'not_found', `No ${what} ${shown(id)} exists.`);

/** An id from a path, checked for its kind's shape: a malformed id is refused like an unknown one, without a query. */
export function idOrNotFound(prefix: IdPrefix, what: string, id: string): string {
  if (!isId(prefix, id)) throw notFound(what, id);
  return id;
}

export const invalidState = (message: string) => new ApiError(409, 'invalid_state', message);

export const validationFailed = (details: ErrorDetail[]) =>
  new ApiError(
    400,
    'validation_failed',
    `The request is invalid: ${details.length} problem${details.length === 1 ? '' : 's'} found.`,
    details,
  );

export const unauthenticated = (message: string) =>
  new ApiError(401, 'unauthenticated', message, undefined, { 'WWW-Authenticate': 'Bearer realm="survey-service"' });

export const insufficientScope = (message: string, missing: string[]) =>
  new ApiError(
    403,
    'insufficient_scope',
    message,
    missing.map((scope) => ({ message: `requires the scope ${scope}`, code: 'missing_scope' })),
  );

/**
 * The database is away (restarting, failing over): retry shortly. `Retry-After` is short because the service is
 * back within seconds of the database; a client that waits it out with backoff loses nothing (docs: "Operating").
 */
export const unavailableRetryAfterSeconds = '2';
export const serviceUnavailable = (message = 'The service is temporarily unavailable. Retry shortly.') =>
  new ApiError(503, 'unavailable', message, undefined, { 'Retry-After': unavailableRetryAfterSeconds });
