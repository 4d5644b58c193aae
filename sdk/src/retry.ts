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
 */
import { parseRetryAfterMs } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** First backoff delay in ms, doubled on each retry (default 500). */
  baseDelayMs?: number;
  /** Cap of a backoff delay in ms (default 8000). */
  maxDelayMs?: number;
  /** The longest `Retry-After` the client waits for by itself, in ms (default 60000). */
  maxRetryAfterMs?: number;
}

export interface RetryingFetchOptions {
  fetch: (request: Request) => Promise<Response>;
  retry: Required<RetryOptions>;
  /** Per-attempt timeout in ms; 0 for none. */
  timeoutMs: number;
  /** Called before each retry (tests and logging). */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export const defaultRetry: Required<RetryOptions> = {
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

export function createRetryingFetch(options: RetryingFetchOptions): (input: Request) => Promise<Response> {
  const { retry, timeoutMs } = options;
  return async (input: Request) => {
    const request = withIdempotencyKey(input);
    const canRetry =
      idempotentMethods.has(request.method) || (request.method === 'POST' && request.headers.has('idempotency-key'));
    const callerSignal = request.signal;

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
        if (callerSignal.aborted || !retriesLeft) throw error;
        const delayMs = backoffDelayMs(attempt, retry.baseDelayMs, retry.maxDelayMs);
        options.onRetry?.({ attempt: attempt + 1, delayMs, reason: String((error as Error)?.message ?? error) });
        await sleep(delayMs, callerSignal);
        continue;
      }

      if (!retriesLeft || !(await isRetryable(response))) return response;
      const serverDelay = parseRetryAfterMs(response.headers.get('retry-after'));
      if (serverDelay !== undefined && serverDelay > retry.maxRetryAfterMs) return response;
      const delayMs = serverDelay ?? backoffDelayMs(attempt, retry.baseDelayMs, retry.maxDelayMs);
      // Free the connection before waiting; the body of an answer we retry is never read.
      await response.body?.cancel().catch(() => undefined);
      options.onRetry?.({ attempt: attempt + 1, delayMs, reason: `HTTP ${response.status}` });
      await sleep(delayMs, callerSignal);
    }
  };
}
