/** Idempotency-Key on POST: replay, conflict, concurrency, scoping. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

function createKey(baseUrl: string, apiKey: string, idempotencyKey: string | undefined, body: object) {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  return fetch(`${baseUrl}/api/v1/api-keys`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function keyCount(organizationId: string): Promise<number> {
  const row = await t.db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return row.n;
}

describe('Idempotency-Key', () => {
  it('replays the first answer for the same key and body', async () => {
    const tenant = await t.createTenant();
    const first = await createKey(t.url, tenant.liveKey, 'retry-1', { name: 'ci', scopes: ['surveys:read'] });
    const second = await createKey(t.url, tenant.liveKey, 'retry-1', { scopes: ['surveys:read'], name: 'ci' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const a = (await first.json()) as { data: { id: string; key: string | null } };
    const b = (await second.json()) as { data: { id: string; key: string | null } };
    // The same key, except that its secret value was never stored: the replay carries null.
    expect(a.data.key).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(b.data).toEqual({ ...a.data, key: null });
    const stored = await t.db
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('idempotency_key', '=', 'retry-1')
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.response_body)).not.toContain(a.data.key!.slice(9));
    expect(await keyCount(tenant.organizationId)).toBe(3);
  });

  it('answers 409 idempotency_conflict for the same key with another body', async () => {
    const tenant = await t.createTenant();
    await createKey(t.url, tenant.liveKey, 'retry-2', { name: 'one', scopes: ['surveys:read'] });
    const other = await createKey(t.url, tenant.liveKey, 'retry-2', { name: 'two', scopes: ['surveys:read'] });
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('idempotency_conflict');
    expect(await keyCount(tenant.organizationId)).toBe(3);
  });

  it('runs concurrent duplicates once', async () => {
    const tenant = await t.createTenant();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => createKey(t.url, tenant.liveKey, 'burst', { name: 'burst', scopes: ['*'] })),
    );
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ data?: { id: string } }>));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(new Set(bodies.map((b) => b.data?.id)).size).toBe(1);
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(11);
    expect(await keyCount(tenant.organizationId)).toBe(3);
  });

  it('replays refusals too, and keeps keys apart per organization and environment', async () => {
    const tenant = await t.createTenant();
    const refused = await createKey(t.url, tenant.testKey, 'same', { name: 'x', scopes: ['*'], environment: 'LIVE' });
    expect(refused.status).toBe(403);
    const replayed = await createKey(t.url, tenant.testKey, 'same', { name: 'x', scopes: ['*'], environment: 'LIVE' });
    expect(replayed.status).toBe(403);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    // The same Idempotency-Key in the other environment and in another organization is a new request.
    expect((await createKey(t.url, tenant.liveKey, 'same', { name: 'x', scopes: ['*'] })).status).toBe(201);
    const other = await t.createTenant();
    expect((await createKey(t.url, other.liveKey, 'same', { name: 'x', scopes: ['*'] })).status).toBe(201);
  });

  it('does not keep answers of requests that failed validation', async () => {
    const tenant = await t.createTenant();
    expect((await createKey(t.url, tenant.liveKey, 'fix-and-retry', { name: '', scopes: ['*'] })).status).toBe(400);
    expect((await createKey(t.url, tenant.liveKey, 'fix-and-retry', { name: 'fixed', scopes: ['*'] })).status).toBe(
      201,
    );
  });

  it('sends a fresh key on every SDK POST unless one is given', async () => {
    const tenant = await t.createTenant();
    const client = t.client(tenant.liveKey);
    const a = await client.unwrap(client.POST('/api/v1/api-keys', { body: { name: 'a', scopes: ['*'] } }));
    const b = await client.unwrap(client.POST('/api/v1/api-keys', { body: { name: 'a', scopes: ['*'] } }));
    expect(a.id).not.toBe(b.id);
  });
});
