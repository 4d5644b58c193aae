/**
 * Per-minute and per-day budgets per organization and environment, counted in PostgreSQL so that every API
 * process draws on one shared budget: both windows in one statement (see `leaseBoth`), leased a few requests at
 * a time so that most requests cost no round trip (see `leaseSize`). The table keeps rate-limiter-flexible's
 * layout, which counted here before one statement replaced its two upserts.
 */
import type pg from 'pg';
import type { Plan } from '../db/schema.js';
import { ApiError } from './errors.js';

export const planLimits: Record<'PRO' | 'BUSINESS', { perMinute: number; perDay: number }> = {
  PRO: { perMinute: 300, perDay: 10_000 },
  BUSINESS: { perMinute: 1_000, perDay: 100_000 },
};

export interface LimitedCaller {
  organizationId: string;
  environment: string;
  plan: Plan;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
}

export interface WindowState {
  window: 'minute' | 'day';
  limit: number;
  remaining: number;
  resetSeconds: number;
}

const windows = { minute: 60, day: 86_400 } as const;

/**
 * Both windows in ONE statement (one round trip), leasing `$5` requests at once: the minute window is counted
 * first and grants what is left of the lease there; the day window is charged only with what the minute granted
 * — a request refused by the minute does not burn the day budget. Fixed windows (`expire` in epoch ms, as
 * rate-limiter-flexible's layout of the `rate_limits` table has it): a window starts at its first request and
 * restarts once expired.
 */
const leaseBoth = `
with minute as (
  insert into rate_limits (key, points, expire) values ($1, $5, $3::bigint + 60000)
  on conflict (key) do update set
    points = case when rate_limits.expire <= $3::bigint then $5 else rate_limits.points + $5 end,
    expire = case when rate_limits.expire <= $3::bigint then $3::bigint + 60000 else rate_limits.expire end
  returning points, expire
), minute_grant as (
  select points, expire, least(greatest($4 - (points - $5), 0), $5) as granted from minute
), day as (
  insert into rate_limits (key, points, expire)
  select $2, granted, $3::bigint + 86400000 from minute_grant where granted > 0
  on conflict (key) do update set
    points = case when rate_limits.expire <= $3::bigint then excluded.points else rate_limits.points + excluded.points end,
    expire = case when rate_limits.expire <= $3::bigint then $3::bigint + 86400000 else rate_limits.expire end
  returning points, expire
)
select g.points as minute_points, g.expire as minute_expire, g.granted as minute_granted,
  day.points as day_points, day.expire as day_expire
from minute_grant g left join day on true`;

interface Leased {
  minute_points: string;
  minute_expire: string;
  minute_granted: string;
  day_points: string | null;
  day_expire: string | null;
}

/** What this process holds of one tenant's budget: requests leased but not yet spent, until the lease lapses. */
interface Lease {
  limits: { minute: number; day: number };
  tokens: number;
  /** Epoch ms: the lease is void once either window restarts. */
  validUntil: number;
  minute: { points: number; expire: number };
  day: { points: number; expire: number };
  /** Set when the database refused: the window stays spent until `validUntil`, replied from memory. */
  refused?: 'minute' | 'day';
}

/**
 * How many requests one process leases at once: 1 % of the smaller window (1 for budgets under 200, so small
 * budgets are counted request by request, exactly), at most 50. The shared total never exceeds a limit; the
 * cost is that near exhaustion a process may refuse while another still holds up to this many unspent
 * requests, and that a lease left unspent when its window ends is lost with the window.
 */
export function leaseSize(limits: { minute: number; day: number }): number {
  return Math.max(1, Math.min(50, Math.floor(Math.min(limits.minute, limits.day) / 100)));
}

/**
 * Budgets drawn from PostgreSQL in small leases (see `leaseSize`), so that most requests are counted in memory
 * while every process still draws on one shared total.
 */
export class RateLimits {
  private readonly leases = new Map<string, Lease>();
  private readonly leasing = new Map<string, Promise<void>>();

  constructor(private readonly pool: pg.Pool) {}

  limitsOf(caller: LimitedCaller): { minute: number; day: number } {
    const plan = planLimits[caller.plan as 'PRO' | 'BUSINESS'] ?? planLimits.PRO;
    return { minute: caller.rateLimitPerMinute ?? plan.perMinute, day: caller.rateLimitPerDay ?? plan.perDay };
  }

  /** Spends one request; returns the window closest to exhaustion, or throws 429 naming the spent window. */
  async consume(caller: LimitedCaller): Promise<WindowState> {
    const key = `${caller.organizationId}:${caller.environment}`;
    const limits = this.limitsOf(caller);
    for (;;) {
      const now = Date.now();
      const lease = this.leases.get(key);
      if (lease && now < lease.validUntil && lease.limits.minute === limits.minute && lease.limits.day === limits.day) {
        if (lease.refused) throw refusal(windowOf(lease, lease.refused, now));
        if (lease.tokens > 0) {
          lease.tokens--;
          const minute = windowOf(lease, 'minute', now);
          const day = windowOf(lease, 'day', now);
          return minute.remaining <= day.remaining ? minute : day;
        }
      }
      // One lease in flight per tenant and process: concurrent requests wait for it instead of each asking.
      let pending = this.leasing.get(key);
      if (!pending) {
        pending = this.lease(key, limits).finally(() => this.leasing.delete(key));
        this.leasing.set(key, pending);
      }
      await pending;
    }
  }

  private async lease(key: string, limits: { minute: number; day: number }): Promise<void> {
    const size = leaseSize(limits);
    const now = Date.now();
    const { rows } = await this.pool.query<Leased>(leaseBoth, [
      `minute:${key}`,
      `day:${key}`,
      now,
      limits.minute,
      size,
    ]);
    const row = rows[0]!;
    const minuteGranted = Number(row.minute_granted);
    const minute = { points: Number(row.minute_points), expire: Number(row.minute_expire) };
    if (minuteGranted === 0) {
      this.leases.set(key, {
        limits,
        tokens: 0,
        validUntil: minute.expire,
        minute,
        day: { points: 0, expire: minute.expire },
        refused: 'minute',
      });
      return;
    }
    const day = { points: Number(row.day_points), expire: Number(row.day_expire) };
    const dayGranted = Math.min(minuteGranted, Math.max(0, limits.day - (day.points - minuteGranted)));
    const validUntil = Math.min(minute.expire, day.expire);
    this.leases.set(key, {
      limits,
      tokens: dayGranted,
      validUntil,
      minute,
      day,
      ...(dayGranted === 0 ? { refused: 'day' as const } : {}),
    });
  }

  /**
   * Current state of both windows without spending anything (for GET /me); this process's unspent lease is not spent.
   */
  async peek(caller: LimitedCaller): Promise<Record<'minute' | 'day', WindowState>> {
    const key = `${caller.organizationId}:${caller.environment}`;
    const limits = this.limitsOf(caller);
    const now = Date.now();
    const lease = this.leases.get(key);
    const unspent = lease && now < lease.validUntil && !lease.refused ? lease.tokens : 0;
    const { rows } = await this.pool.query<{ key: string; points: number; expire: string }>(
      'select key, points, expire from rate_limits where key = any($1)',
      [[`minute:${key}`, `day:${key}`]],
    );
    const read = (window: 'minute' | 'day'): WindowState => {
      const row = rows.find((r) => r.key === `${window}:${key}`);
      if (!row || Number(row.expire) <= now)
        return { window, limit: limits[window], remaining: limits[window], resetSeconds: windows[window] };
      return stateOf(window, limits[window], Number(row.points) - unspent, Number(row.expire) - now);
    };
    return { minute: read('minute'), day: read('day') };
  }
}

/** A window as this process sees it: what the database had counted at the lease, less what is still unspent here. */
function windowOf(lease: Lease, window: 'minute' | 'day', now: number): WindowState {
  const counted = lease[window];
  const spent = lease.refused ? Math.max(counted.points, lease.limits[window]) : counted.points - lease.tokens;
  return stateOf(window, lease.limits[window], spent, counted.expire - now);
}

function refusal(state: WindowState): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    `Rate limit exceeded: ${state.limit} requests per ${state.window}. Retry in ${state.resetSeconds} seconds.`,
    [{ message: `per-${state.window} limit of ${state.limit} requests exceeded`, code: state.window }],
    { 'Retry-After': String(state.resetSeconds), ...headersOf(state) },
  );
}

function stateOf(window: 'minute' | 'day', limit: number, consumed: number, msBeforeNext: number): WindowState {
  return {
    window,
    limit,
    remaining: Math.max(0, limit - consumed),
    resetSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)),
  };
}

export function headersOf(state: WindowState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
  };
}
