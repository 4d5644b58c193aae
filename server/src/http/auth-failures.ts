/**
 * Failed authentications per source address, counted in memory: a source that keeps failing — guessing keys, or
 * a misconfigured client retrying a revoked one — gets 429 instead of 401 for its failures once it has spent its
 * budget, with `Retry-After` and `RateLimit-*` headers describing that budget. Only failures are refused: a
 * valid key presented from the same address (every customer of an integration platform behind one egress
 * address shares it) is looked up and passes as usual, so one misconfigured neighbour locks nobody else out.
 * Fixed one-minute windows; the table is bounded (the oldest sources are forgotten first), so a flood of
 * addresses cannot grow it without limit.
 */
import { ApiError } from './errors.js';
import { headersOf } from './rate-limit.js';

const windowMs = 60_000;
const maxSources = 100_000;

export class AuthFailures {
  private readonly sources = new Map<string, { count: number; since: number }>();

  constructor(private readonly limitPerMinute: number) {}

  /**
   * The reply owed to a failed authentication from `source` that has already failed `limitPerMinute` times in
   * its current window: 429 with `Retry-After` and the `RateLimit-*` headers of this budget (none left, reset at
   * the window's end). Undefined while the source is within its budget.
   */
  refusal(source: string): ApiError | undefined {
    const entry = this.sources.get(source);
    if (!entry) return undefined;
    const age = Date.now() - entry.since;
    if (age >= windowMs) {
      this.sources.delete(source);
      return undefined;
    }
    if (entry.count < this.limitPerMinute) return undefined;
    const resetSeconds = Math.max(1, Math.ceil((windowMs - age) / 1000));
    return new ApiError(
      429,
      'rate_limited',
      `Too many failed authentications from this address. Retry in ${resetSeconds} seconds with a valid API key.`,
      [{ message: `more than ${this.limitPerMinute} failed authentications in a minute`, code: 'auth_failures' }],
      {
        'Retry-After': String(resetSeconds),
        ...headersOf({ window: 'minute', limit: this.limitPerMinute, remaining: 0, resetSeconds }),
      },
    );
  }

  record(source: string): void {
    const now = Date.now();
    const entry = this.sources.get(source);
    if (entry && now - entry.since < windowMs) {
      entry.count += 1;
      return;
    }
    this.sources.delete(source);
    if (this.sources.size >= maxSources) this.sources.delete(this.sources.keys().next().value!);
    this.sources.set(source, { count: 1, since: now });
  }
}
