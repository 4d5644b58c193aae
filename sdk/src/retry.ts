/**
 * The fetch wrapper under every SDK request: per-attempt timeout, an `Idempotency-Key` on every POST, and
 * retries of answers that are worth retrying.
 *
 * What is retried: network errors, per-attempt timeouts, 429 and 5xx — but only for requests that are safe
 * to send twice: GET, HEAD, OPTIONS, PUT and DELETE (idempotent by HTTP semantics) and POSTs carrying an
 * `Idempotency-Key` (the server replays the first answer for 24 hours). Since the client gives every POST a
 * random key unless the caller set one, POST retries are safe too. PATCH is never retried. Other 4xx are
 * never retried: sending the same request again gives the same answer.
 *
 * How long to wait: `Retry-After` when the server sent it (429, 503), otherwise exponential backoff with
 * jitter, capped at `maxDelayMs`. A `Retry-After` longer than `maxRetryAfterMs` (a spent per-day limit)
 * is not waited for: the 429 is returned at once and surfaces as a `RateLimitError` with `retryAfter`.
 * `onRetry` hears of every retry before its wait, so that minutes of waiting for a spent limit are never silent.
 */
import { errorFromResponse, parseRetryAfterMs } from './errors.js';

/** What `retry.onRetry` is told before each retry. */
export interface RetryEvent {
  /** The retry about to be made: 1 for the first. */
  attempt: number;
  /** How long the client waits before it, in ms (the server's `Retry-After`, else backoff). */
  delayMs: number;
  /**
   * Why: the typed error of the answer (`RateLimitError`, `ServerError`, `ConflictError` for
   * `idempotency_in_progress`), or the network error or attempt timeout that the fetch threw.
   */
  error: unknown;
  /** The answer being retried (status and headers; its body is already read), absent for a network error. */
  response?: Response;
  /** The request's method and URL. */
  method: string;
  url: string;
}

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** First backoff delay in ms, doubled on each retry (default 500). */
  baseDelayMs?: number;
  /** Cap of a backoff delay in ms (default 8000). */
  maxDelayMs?: number;
  /** The longest `Retry-After` the client waits for by itself, in ms (default 60000). */
  maxRetryAfterMs?: number;
  /**
   * Called before each retry, so that waits are not silent (a spent per-minute limit can hold a call for
   * minutes): log it, count it, or throw to end the call at once with what you throw (for example `event.error`).
   */
  onRetry?: (event: RetryEvent) => void;
}

/** The policy with its numbers filled in; `onRetry` stays optional. */
export type RetryPolicy = Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>;

export interface RetryingFetchOptions {
  fetch: (request: Request) => Promise<Response>;
  retry: RetryPolicy;
  /** Per-attempt timeout in ms; 0 for none. */
  timeoutMs: number;
}

export const defaultRetry: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};

const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * What the server means by its status: a spent limit (429), a failure of ours that a retry may not meet (500,
 * 502, 503, 504), or a duplicate of a request still running (409 `idempotency_in_progress`). Never 501 (the
 * operation is absent: a retry cannot help), other 4xx (the request itself is wrong), or 409 conflicts.
 */
async function isRetryable(response: Response): Promise<boolean> {
  const { status } = response;
  if (status === 429 || status === 500 || status === 502 || status === 503 || status === 504) return true;
  if (status !== 409) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: unknown } } | undefined;
  return body?.error?.code === 'idempotency_in_progress';
}

/** Exponential backoff with "equal jitter": half the delay is fixed, half random, so retries spread out. */
export function backoffDelayMs(retry: number, baseDelayMs: number, maxDelayMs: number): number {
  const exp = Math.min(maxDelayMs, baseDelayMs * 2 ** retry);
  return exp / 2 + Math.random() * (exp / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Gives a POST without `Idempotency-Key` a random one, so that retrying it can never act twice. */
function withIdempotencyKey(request: Request): Request {
  if (request.method !== 'POST' || request.headers.has('idempotency-key')) return request;
  const headers = new Headers(request.headers);
  headers.set('Idempotency-Key', crypto.randomUUID());
  // `duplex` is required by Node's fetch when the body is a stream; browsers ignore it.
  return new Request(request, { headers, duplex: 'half' } as RequestInit);
}

/**
 * The failure of the last attempt of a call that was then aborted (by its signal or its own `timeoutMs`), keyed by
 * the abort reason the call rejects with: the reason is the same object all the way up, so the caller can give
 * its `TimeoutError` the error that actually kept the call from succeeding.
 */
const failureBeforeAbort = new WeakMap<object, unknown>();

/** The error of the last failed attempt before a call was aborted with `reason`, if an attempt had failed. */
export function lastFailureBefore(reason: unknown): unknown {
  return typeof reason === 'object' && reason !== null ? failureBeforeAbort.get(reason) : undefined;
}

/** The typed error of an answer that is retried; reading the body also frees the connection before the wait. */
async function errorOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => undefined);
  let body: unknown = text;
  try {
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the error is built from the status.
  }
  return errorFromResponse(response, body);
}

export function createRetryingFetch(options: RetryingFetchOptions): (input: Request) => Promise<Response> {
  const { retry, timeoutMs } = options;
  return async (input: Request) => {
    const request = withIdempotencyKey(input);
    const canRetry =
      idempotentMethods.has(request.method) || (request.method === 'POST' && request.headers.has('idempotency-key'));
    const callerSignal = request.signal;
    let lastFailure: unknown;
    const aborted = (error: unknown) => {
      if (lastFailure !== undefined && typeof callerSignal.reason === 'object' && callerSignal.reason !== null)
        failureBeforeAbort.set(callerSignal.reason as object, lastFailure);
      return error;
    };
    const wait = async (event: Omit<RetryEvent, 'method' | 'url'>) => {
      lastFailure = event.error;
      retry.onRetry?.({ ...event, method: request.method, url: request.url });
      await sleep(event.delayMs, callerSignal).catch((error: unknown) => {
        throw aborted(error);
      });
    };

    for (let attempt = 0; ; attempt += 1) {
      const retriesLeft = canRetry && attempt < retry.maxRetries;
      // Each attempt sends a clone, so the original body stays readable for the next one.
      const timeoutSignal = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
      const signal = timeoutSignal ? AbortSignal.any([callerSignal, timeoutSignal]) : callerSignal;
      const attemptRequest = new Request(request.clone(), { signal });

      let response: Response;
      try {
        response = await options.fetch(attemptRequest);
      } catch (error) {
        // The caller's own abort is final; a network failure or an attempt timeout is worth another go.
        if (callerSignal.aborted) throw aborted(error);
        if (!retriesLeft) throw error;
        await wait({
          attempt: attempt + 1,
          delayMs: backoffDelayMs(attempt, retry.baseDelayMs, retry.maxDelayMs),
          error,
        });
        continue;
      }

      if (!retriesLeft || !(await isRetryable(response))) return response;
      const serverDelay = parseRetryAfterMs(response.headers.get('retry-after'));
      if (serverDelay !== undefined && serverDelay > retry.maxRetryAfterMs) return response;
      const delayMs = serverDelay ?? backoffDelayMs(attempt, retry.baseDelayMs, retry.maxDelayMs);
      await wait({ attempt: attempt + 1, delayMs, error: await errorOf(response), response });
    }
  };
}
