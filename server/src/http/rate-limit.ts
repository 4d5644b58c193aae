/**
 * Per-minute and per-day budgets per organization and environment, counted in PostgreSQL with
 * rate-limiter-flexible's RateLimiterPostgres (a maintained limiter with an atomic upsert per hit), so that
 * every API process draws on one shared budget. Windows are fixed: a minute or a day from the first request
 * of the window.
 */
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
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

export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterPostgres>();

  constructor(private readonly pool: pg.Pool) {}

  limitsOf(caller: LimitedCaller): { minute: number; day: number } {
    const plan = planLimits[caller.plan as 'PRO' | 'BUSINESS'] ?? planLimits.PRO;
    return { minute: caller.rateLimitPerMinute ?? plan.perMinute, day: caller.rateLimitPerDay ?? plan.perDay };
  }

  // One limiter per (window, limit): the counter is shared by key prefix, the limit is applied per call.
  private limiter(window: keyof typeof windows, points: number): RateLimiterPostgres {
    const id = `${window}:${points}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.pool,
        tableName: 'rate_limits',
        tableCreated: true,
        clearExpiredByTimeout: false,
        keyPrefix: window,
        points,
        duration: windows[window],
      });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  /** Spends one request; returns the window closest to exhaustion, or throws 429 naming the spent window. */
  async consume(caller: LimitedCaller): Promise<WindowState> {
    const key = `${caller.organizationId}:${caller.environment}`;
    const limits = this.limitsOf(caller);
    // Both windows at once (every request counts in both, refused ones included): one round trip of latency.
    const results = await Promise.allSettled((['minute', 'day'] as const).map((window) => this.limiter(window, limits[window]).consume(key)));
    const states: WindowState[] = [];
    for (const [index, window] of (['minute', 'day'] as const).entries()) {
      const result = results[index]!;
      if (result.status === 'fulfilled') {
        states.push(stateOf(window, limits[window], result.value));
        continue;
      }
      if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
      const state = stateOf(window, limits[window], result.reason);
      throw new ApiError(
        429,
        'rate_limited',
        `Rate limit exceeded: ${state.limit} requests per ${window}. Retry in ${state.resetSeconds} seconds.`,
        [{ message: `per-${window} limit of ${state.limit} requests exceeded`, code: window }],
        { 'Retry-After': String(state.resetSeconds), ...headersOf(state) },
      );
    }
    return states.reduce((closest, state) => (state.remaining < closest.remaining ? state : closest));
  }

  /** Current state of both windows without spending anything (for GET /me). */
  async peek(caller: LimitedCaller): Promise<Record<'minute' | 'day', WindowState>> {
    const key = `${caller.organizationId}:${caller.environment}`;
    const limits = this.limitsOf(caller);
    const read = async (window: 'minute' | 'day'): Promise<WindowState> => {
      const res = await this.limiter(window, limits[window]).get(key);
      return res ? stateOf(window, limits[window], res) : { window, limit: limits[window], remaining: limits[window], resetSeconds: windows[window] };
    };
    return { minute: await read('minute'), day: await read('day') };
  }
}

function stateOf(window: 'minute' | 'day', limit: number, res: RateLimiterRes): WindowState {
  return {
    window,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

export function headersOf(state: WindowState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
  };
}
