/**
 * When the next attempt runs. The schedule is the one Standard Webhooks and Svix publish: attempt 1 at once,
 * then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure (eight attempts, about 27 h), each delay
 * with ±10 % jitter so that a burst of failures does not come back as a burst. Tests configure a short schedule
 * (WEBHOOK_RETRY_SCHEDULE_MS); the rules below are the same for any schedule.
 * The schedule itself is a setting, read in config.ts (`standardSchedule`, `parseSchedule`).
 */

const hour = 60 * 60 * 1000;

/** Retry-After asks for at most this long; longer values are capped (an endpoint cannot park deliveries for days). */
export const retryAfterCapMs = hour;
export const jitterRatio = 0.1;

/**
 * The delay before the attempt after `attempt` (1-based) failed, or undefined when that was the last one.
 * `retryAfterMs` is the endpoint's Retry-After (429/503), honoured as a lower bound, capped.
 * `random` is injectable so that tests can pin the jitter.
 */
export function nextDelayMs(
  schedule: readonly number[],
  attempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number | undefined {
  const base = schedule[attempt];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 + jitterRatio * (2 * random() - 1)));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, retryAfterCapMs));
}

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
