/**
 * Failed authentications per source address, counted in memory: a source that keeps guessing keys is refused
 * with 429 before its next attempt costs a key lookup. Fixed one-minute windows; the table is bounded (the
 * oldest sources are forgotten first), so a flood of addresses cannot grow it without limit.
 */
import { ApiError } from './errors.js';

const windowMs = 60_000;
const maxSources = 100_000;

export class AuthFailures {
  private readonly sources = new Map<string, { count: number; since: number }>();

  constructor(private readonly limitPerMinute: number) {}

  /** Throws 429 when this source has failed `limitPerMinute` times in its current window. */
  check(source: string): void {
    const entry = this.sources.get(source);
    if (!entry) return;
    const age = Date.now() - entry.since;
    if (age >= windowMs) {
      this.sources.delete(source);
      return;
    }
    if (entry.count < this.limitPerMinute) return;
    const retryAfter = String(Math.max(1, Math.ceil((windowMs - age) / 1000)));
    throw new ApiError(
      429,
      'rate_limited',
      `Too many failed authentications from this address. Retry in ${retryAfter} seconds.`,
      [{ message: `more than ${this.limitPerMinute} failed authentications in a minute`, code: 'auth_failures' }],
      { 'Retry-After': retryAfter },
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
