/**
 * Per-minute and per-day budgets per organization and environment, counted in PostgreSQL so that every API
 * process draws on one shared budget: both windows in one statement (see `countBoth`). The table keeps
 * rate-limiter-flexible's layout, which counted here before one statement replaced its two upserts.
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

interface Counted {
  minute_points: number;
  minute_expire: string;
  day_points: number | null;
  day_expire: string | null;
}

/**
 * Both windows in ONE statement (one round trip): the minute window is counted first, and the day window only
 * when the minute allowed the request — a request refused by the minute does not burn the day budget. Fixed
 * windows (`expire` in epoch ms, as rate-limiter-flexible's layout of the `rate_limits` table has it): a window
 * starts at its first request and restarts once expired.
 */
const countBoth = `
with minute as (
  insert into rate_limits (key, points, expire) values ($1, 1, $3::bigint + 60000)
  on conflict (key) do update set
    points = case when rate_limits.expire <= $3::bigint then 1 else rate_limits.points + 1 end,
    expire = case when rate_limits.expire <= $3::bigint then $3::bigint + 60000 else rate_limits.expire end
  returning points, expire
), day as (
  insert into rate_limits (key, points, expire)
  select $2, 1, $3::bigint + 86400000 from minute where minute.points <= $4
  on conflict (key) do update set
    points = case when rate_limits.expire <= $3::bigint then 1 else rate_limits.points + 1 end,
    expire = case when rate_limits.expire <= $3::bigint then $3::bigint + 86400000 else rate_limits.expire end
  returning points, expire
)
select minute.points as minute_points, minute.expire as minute_expire, day.points as day_points, day.expire as day_expire
from minute left join day on true`;

export class RateLimits {
  constructor(private readonly pool: pg.Pool) {}

  limitsOf(caller: LimitedCaller): { minute: number; day: number } {
    const plan = planLimits[caller.plan as 'PRO' | 'BUSINESS'] ?? planLimits.PRO;
    return { minute: caller.rateLimitPerMinute ?? plan.perMinute, day: caller.rateLimitPerDay ?? plan.perDay };
  }

  /** Spends one request; returns the window closest to exhaustion, or throws 429 naming the spent window. */
  async consume(caller: LimitedCaller): Promise<WindowState> {
    const key = `${caller.organizationId}:${caller.environment}`;
    const limits = this.limitsOf(caller);
    const now = Date.now();
    const { rows } = await this.pool.query<Counted>(countBoth, [`minute:${key}`, `day:${key}`, now, limits.minute]);
    const row = rows[0]!;
    const minute = stateOf('minute', limits.minute, Number(row.minute_points), Number(row.minute_expire) - now);
    if (Number(row.minute_points) > limits.minute) throw refusal(minute);
    const day = stateOf('day', limits.day, Number(row.day_points), Number(row.day_expire) - now);
    if (Number(row.day_points) > limits.day) throw refusal(day);
    return minute.remaining <= day.remaining ? minute : day;
  }

  /** Current state of both windows without spending anything (for GET /me). */
  async peek(caller: LimitedCaller): Promise<Record<'minute' | 'day', WindowState>> {
    const key = `${caller.organizationId}:${caller.environment}`;
    const limits = this.limitsOf(caller);
    const now = Date.now();
    const { rows } = await this.pool.query<{ key: string; points: number; expire: string }>('select key, points, expire from rate_limits where key = any($1)', [[`minute:${key}`, `day:${key}`]]);
    const read = (window: 'minute' | 'day'): WindowState => {
      const row = rows.find((r) => r.key === `${window}:${key}`);
      if (!row || Number(row.expire) <= now) return { window, limit: limits[window], remaining: limits[window], resetSeconds: windows[window] };
      return stateOf(window, limits[window], Number(row.points), Number(row.expire) - now);
    };
    return { minute: read('minute'), day: read('day') };
  }
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
