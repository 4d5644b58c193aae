/**
 * Typed errors. Every non-2xx answer of the API wears the error envelope
 * `{ error: { code, message, status, details }, meta: { requestId, … } }`; `errorFromResponse` turns it into
 * the subclass that matches its status, so callers can `catch (e) { if (e instanceof NotFoundError) … }`
 * and branch on the stable `code` rather than on `message`.
 */

/** One problem found in a request, as listed in `error.details`. */
export interface ErrorDetailLike {
  path?: string;
  message: string;
  code?: string;
}

export interface SurveyServiceErrorInit {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetailLike[];
  requestId?: string | undefined;
  /** The raw error body as received, for logging. */
  body?: unknown;
}

/** Base class of every error the API answers with. */
export class SurveyServiceError extends Error {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Stable machine-readable code (`validation_failed`, `not_found`, `rate_limited`, …). */
  readonly code: string;
  /** Every problem found; empty when the error is not about the request's content. */
  readonly details: ErrorDetailLike[];
  /** `meta.requestId` (or the `X-Request-Id` header): quote it when asking for support. */
  readonly requestId: string | undefined;
  /** The raw error body as received. */
  readonly body: unknown;

  constructor(init: SurveyServiceErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.body = init.body;
  }
}

/** 400: the request breaks the contract; `details` lists every problem. */
export class ValidationError extends SurveyServiceError {}
/** 401: no key, or a malformed, unknown, revoked or expired key. */
export class AuthenticationError extends SurveyServiceError {}
/** 403: the key lacks a scope (`insufficient_scope`) or the plan has no API access (`plan_not_eligible`). */
export class PermissionError extends SurveyServiceError {}
/** 404: no such resource for this organization and environment. */
export class NotFoundError extends SurveyServiceError {}
/** 409: the resource's state forbids the action, or an `Idempotency-Key` conflict. */
export class ConflictError extends SurveyServiceError {}
/** 429: a per-minute or per-day limit is spent. */
export class RateLimitError extends SurveyServiceError {
  /** Seconds to wait before retrying, from `Retry-After`, when the server sent it. */
  readonly retryAfter: number | undefined;
  constructor(init: SurveyServiceErrorInit & { retryAfter?: number | undefined }) {
    super(init);
    this.retryAfter = init.retryAfter;
  }
}
/** 5xx: the server failed (`internal_error`), is not there yet (`not_implemented`) or is unavailable. */
export class ServerError extends SurveyServiceError {}

/**
 * Raised by the wait helpers when a job did not finish in time, and by a call given up by its own `timeoutMs`. For a
 * call, `cause` is the last error met before the time ran out (a `RateLimitError` whose `Retry-After` was being
 * waited for, a `ServerError`, a network error), else the timeout itself, so the log says why it took so long.
 */
export class TimeoutError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TimeoutError';
  }
}

/** Parses `Retry-After` (delta-seconds or HTTP-date) into milliseconds; undefined when absent or invalid. */
export function parseRetryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const defaultCodes: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'insufficient_scope',
  404: 'not_found',
  409: 'invalid_state',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  501: 'not_implemented',
  503: 'unavailable',
};

const scimErrorSchema = 'urn:ietf:params:scim:api:messages:2.0:Error';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Builds the typed error for an error answer. `body` is what openapi-fetch parsed (JSON when it could,
 * otherwise text); a body that is not the envelope (a proxy's HTML page) still gives an error of the right
 * class, with a code derived from the status.
 */
export function errorFromResponse(response: Response, body: unknown): SurveyServiceError {
  const status = response.status;
  const envelope = isRecord(body) ? body : {};
  // The SCIM operations answer SCIM errors (RFC 7644 §3.12), not the envelope: their `scimType` is the code (when
  // the RFC defines one for the problem) and their `detail` the message.
  const scim: Record<string, unknown> =
    Array.isArray(envelope.schemas) && envelope.schemas.includes(scimErrorSchema)
      ? { code: envelope.scimType, message: envelope.detail }
      : {};
  const error = isRecord(envelope.error) ? envelope.error : scim;
  const meta = isRecord(envelope.meta) ? envelope.meta : {};
  const code = typeof error.code === 'string' ? error.code : (defaultCodes[status] ?? `http_${status}`);
  const message =
    typeof error.message === 'string'
      ? error.message
      : `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const details = Array.isArray(error.details)
    ? error.details.filter((d): d is ErrorDetailLike => isRecord(d) && typeof d.message === 'string')
    : [];
  const requestId =
    typeof meta.requestId === 'string' ? meta.requestId : (response.headers.get('x-request-id') ?? undefined);
  const init: SurveyServiceErrorInit = { status, code, message, details, requestId, body };

  if (status === 429) {
    const ms = parseRetryAfterMs(response.headers.get('retry-after'));
    return new RateLimitError({ ...init, retryAfter: ms === undefined ? undefined : Math.ceil(ms / 1000) });
  }
  if (status >= 500) return new ServerError(init);
  switch (status) {
    case 400:
      return new ValidationError(init);
    case 401:
      return new AuthenticationError(init);
    case 403:
      return new PermissionError(init);
    case 404:
      return new NotFoundError(init);
    case 409:
      return new ConflictError(init);
    default:
      return new SurveyServiceError(init);
  }
}
