import type { Client } from 'openapi-fetch';
import { TimeoutError } from './errors.js';
import type { paths } from './generated/openapi.js';
import { sleep } from './retry.js';
import type { SyncJob } from './types.js';
import { unwrap } from './unwrap.js';

export interface WaitOptions {
  /** Give up after this many ms and throw `TimeoutError` (default 300000, five minutes). */
  timeoutMs?: number;
  /** Wait between the first and second poll, in ms (default 500). */
  initialDelayMs?: number;
  /** Cap of the wait between polls, in ms (default 5000); each wait is 1.5 times the previous one. */
  maxDelayMs?: number;
  /** Aborts the wait (rejects with the signal's reason). */
  signal?: AbortSignal;
}

/**
 * Calls `fn` until `isDone(result)`, waiting longer between calls each time (polite exponential backoff),
 * and returns the last result. The first call is immediate. Throws `TimeoutError` after `timeoutMs`; errors
 * thrown by `fn` propagate (the client has already retried what was worth retrying).
 */
export async function waitFor<T>(
  fn: () => Promise<T>,
  isDone: (value: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 300_000, initialDelayMs = 500, maxDelayMs = 5000, signal } = options;
  const deadline = Date.now() + timeoutMs;
  let delay = initialDelayMs;
  for (;;) {
    signal?.throwIfAborted();
    const value = await fn();
    if (isDone(value)) return value;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new TimeoutError(`Not done after ${timeoutMs} ms`);
    await sleep(Math.min(delay, remaining), signal);
    delay = Math.min(maxDelayMs, delay * 1.5);
  }
}

const finalSyncStatuses = new Set(['completed', 'failed']);

/**
 * Polls `GET /api/v1/respondents/sync/{jobId}` until the job is `completed` or `failed` and returns it
 * (a failed job is returned, not thrown: read `status` and `stats`). Throws `TimeoutError` if it does not
 * finish within `timeoutMs`, and the typed API error if a poll fails (`NotFoundError` for an unknown job).
 */
export async function waitForSyncJob(
  client: Client<paths>,
  jobId: string,
  options: WaitOptions = {},
): Promise<SyncJob> {
  const fetchJob = async (): Promise<SyncJob> =>
    (await unwrap(
      client.GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId } }, signal: options.signal }),
    )) as SyncJob;
  try {
    return await waitFor(
      fetchJob,
      (job) => finalSyncStatuses.has(String((job as { status?: unknown }).status)),
      options,
    );
  } catch (error) {
    if (error instanceof TimeoutError)
      throw new TimeoutError(`Sync job ${jobId} did not finish within ${options.timeoutMs ?? 300_000} ms`);
    throw error;
  }
}
