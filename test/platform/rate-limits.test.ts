/**
 * Per-minute and per-day budgets per organization and environment, shared by every API process through
 * PostgreSQL, with RateLimit-* headers on every answer and Retry-After on 429.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { leaseSize } from '../../server/src/http/rate-limit.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

async function tenantWithLimits(perMinute: number | null, perDay: number | null) {
  const tenant = await t.createTenant();
  await t.db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: perMinute, rate_limit_per_day: perDay })
    .where('id', '=', tenant.organizationId)
    .execute();
  return tenant;
}

const me = (baseUrl: string, key: string) =>
  fetch(`${baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });

describe('rate limits', () => {
  it('lease 1 % of the smaller window at a time: request by request under 200, at most 50', () => {
    expect(leaseSize({ minute: 300, day: 10_000 })).toBe(3);
    expect(leaseSize({ minute: 1_000, day: 100_000 })).toBe(10);
    expect(leaseSize({ minute: 150, day: 100_000 })).toBe(1);
    expect(leaseSize({ minute: 1_000, day: 2 })).toBe(1);
    expect(leaseSize({ minute: 100_000_000, day: 1_000_000_000 })).toBe(50);
  });

  it('counts a BUSINESS tenant in leases of 10 (one round trip per 10 requests) with exact headers', async () => {
    const { liveKey, organizationId } = await t.createTenant('BUSINESS');
    const remaining: number[] = [];
    for (let i = 0; i < 12; i++) remaining.push(Number((await me(t.url, liveKey)).headers.get('ratelimit-remaining')));
    expect(remaining).toEqual(Array.from({ length: 12 }, (_, i) => 1000 - 1 - i));
    const minute = await t.db
      .selectFrom('rate_limits')
      .select('points')
      .where('key', '=', `minute:${organizationId}:LIVE`)
      .executeTakeFirstOrThrow();
    expect(minute.points).toBe(20);
  });

  it('sends RateLimit-* headers for the window closest to exhaustion', async () => {
    const { liveKey } = await t.createTenant();
    const first = await me(t.url, liveKey);
    expect(first.headers.get('ratelimit-limit')).toBe('300');
    expect(first.headers.get('ratelimit-remaining')).toBe('299');
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    const second = await me(t.url, liveKey);
    expect(second.headers.get('ratelimit-remaining')).toBe('298');
  });

  it('answers 429 rate_limited with Retry-After once the minute is spent, also on error paths', async () => {
    const { liveKey } = await tenantWithLimits(3, null);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await me(t.url, liveKey)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await me(t.url, liveKey);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    const body = (await refused.json()) as {
      error: { code: string; details: Array<{ code: string }> };
      meta: { requestId: string };
    };
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.details[0]?.code).toBe('minute');
    expect(body.meta.requestId).toMatch(/^req_/);
  });

  it('does not spend the day budget on requests the minute window refused (both windows in one statement)', async () => {
    const { liveKey, organizationId } = await tenantWithLimits(2, 100);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await me(t.url, liveKey)).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    const day = await t.db
      .selectFrom('rate_limits')
      .select('points')
      .where('key', '=', `day:${organizationId}:LIVE`)
      .executeTakeFirstOrThrow();
    expect(day.points).toBe(2);
  });

  it('enforces the per-day window too', async () => {
    const { liveKey } = await tenantWithLimits(1000, 2);
    expect((await me(t.url, liveKey)).status).toBe(200);
    const second = await me(t.url, liveKey);
    expect(second.headers.get('ratelimit-limit')).toBe('2');
    expect(second.headers.get('ratelimit-remaining')).toBe('0');
    const refused = await me(t.url, liveKey);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { details: Array<{ code: string }> } };
    expect(body.error.details[0]?.code).toBe('day');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(60);
  });

  it('counts LIVE and TEST separately, and organizations separately', async () => {
    const a = await tenantWithLimits(2, null);
    const b = await tenantWithLimits(2, null);
    await me(t.url, a.liveKey);
    await me(t.url, a.liveKey);
    expect((await me(t.url, a.liveKey)).status).toBe(429);
    expect((await me(t.url, a.testKey)).status).toBe(200);
    expect((await me(t.url, b.liveKey)).status).toBe(200);
  });

  it('reports the remaining budget in GET /me without spending more than the call itself', async () => {
    const { liveKey } = await t.createTenant('BUSINESS');
    const client = t.client(liveKey);
    const first = await client.unwrap(client.GET('/api/v1/me'));
    const second = await client.unwrap(client.GET('/api/v1/me'));
    expect(first.rateLimits.minute.limit).toBe(1000);
    expect(first.rateLimits.minute.remaining - second.rateLimits.minute.remaining).toBe(1);
    expect(second.rateLimits.day.remaining).toBe(100_000 - 2);
  });
});

describe('two API processes on one database', () => {
  let processes: ServiceProcess[] = [];
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
  });

  it('share one budget', async () => {
    processes = await Promise.all([
      startServiceProcess({ databaseUrl: t.database.url, role: 'api' }),
      startServiceProcess({ databaseUrl: t.database.url, role: 'api' }),
    ]);
    const urls = processes.map((p) => p.url!);
    expect(urls[0]).not.toBe(urls[1]);
    const { liveKey } = await tenantWithLimits(10, null);
    // 16 requests, alternating between the two processes, all at once.
    const statuses = await Promise.all(
      Array.from({ length: 16 }, (_, i) => me(urls[i % 2]!, liveKey).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    // Both processes refuse now, whichever served the budget.
    expect((await me(urls[0]!, liveKey)).status).toBe(429);
    expect((await me(urls[1]!, liveKey)).status).toBe(429);
  }, 120_000);

  it('never exceed the shared budget while leasing requests in blocks, and refuse at most one lease early', async () => {
    // 500 per minute: each process leases leaseSize = 5 requests per round trip.
    const limits = { minute: 500, day: 100_000 };
    expect(leaseSize(limits)).toBe(5);
    const { liveKey, organizationId } = await tenantWithLimits(limits.minute, limits.day);
    const urls = processes.map((p) => p.url!);
    const statuses: number[] = [];
    for (let round = 0; round < 6; round++) {
      statuses.push(
        ...(await Promise.all(Array.from({ length: 100 }, (_, i) => me(urls[i % 2]!, liveKey).then((r) => r.status)))),
      );
    }
    const served = statuses.filter((s) => s === 200).length;
    expect(served).toBeLessThanOrEqual(limits.minute);
    // Near exhaustion the other process may still hold up to one unspent lease.
    expect(served).toBeGreaterThanOrEqual(limits.minute - leaseSize(limits));
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // The day was charged with what the minute granted, never with refused requests.
    const day = await t.db
      .selectFrom('rate_limits')
      .select('points')
      .where('key', '=', `day:${organizationId}:LIVE`)
      .executeTakeFirstOrThrow();
    expect(day.points).toBeLessThanOrEqual(limits.minute);
    expect(day.points).toBeGreaterThanOrEqual(served);
  }, 120_000);

  it('see a revocation made through the other at once', async () => {
    const { liveKey } = await t.createTenant();
    const [one, two] = processes.map((p) => p.url!);
    const created = await fetch(`${one}/api/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'short-lived', scopes: ['surveys:read'] }),
    });
    const key = ((await created.json()) as { data: { id: string; key: string } }).data;
    expect((await me(two!, key.key)).status).toBe(200);
    const revoked = await fetch(`${one}/api/v1/api-keys/${key.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${liveKey}` },
    });
    expect(revoked.status).toBe(200);
    expect((await me(two!, key.key)).status).toBe(401);
  }, 60_000);
});
