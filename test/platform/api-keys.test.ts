/** API key operations through the SDK: create, list, revoke; the rules on what a key may mint; isolation. */
import { unwrapEnvelope } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('API keys', () => {
  it('creates a key shown once, lists it masked, and revokes it for good', async () => {
    const tenant = await t.createTenant();
    const admin = t.client(tenant.liveKey);
    const created = await admin.unwrap(
      admin.POST('/api/v1/api-keys', {
        body: { name: 'Reporting', scopes: ['analytics:read', 'surveys:read'], expiresAt: '2099-01-01T00:00:00Z' },
      }),
    );
    expect(created.key).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(created.environment).toBe('LIVE');
    expect(created.maskedKey).toBe(`svc_live_••••••••${created.key!.slice(-4)}`);
    expect(created.expiresAt).toBe('2099-01-01T00:00:00.000Z');

    const listed = await admin.unwrap(admin.GET('/api/v1/api-keys', { params: { query: { pageSize: 100 } } }));
    const entry = listed.find((k) => k.id === created.id)!;
    expect(entry).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(created.key!);
    expect(entry).not.toHaveProperty('key');

    const reporting = t.client(created.key!);
    expect((await reporting.GET('/api/v1/me')).response.status).toBe(200);
    const revoked = await admin.unwrap(admin.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: created.id } } }));
    expect(revoked.revokedAt).not.toBeNull();
    expect((await reporting.GET('/api/v1/me')).response.status).toBe(401);
    // Revoking again is harmless and keeps the first revocation time.
    const again = await admin.unwrap(admin.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: created.id } } }));
    expect(again.revokedAt).toBe(revoked.revokedAt);
    // Revoked keys leave the default listing.
    const active = await admin.unwrap(admin.GET('/api/v1/api-keys'));
    expect(active.map((k) => k.id)).not.toContain(created.id);
    const all = await admin.unwrap(admin.GET('/api/v1/api-keys', { params: { query: { includeRevoked: true } } }));
    expect(all.map((k) => k.id)).toContain(created.id);
  });

  it('pages through keys newest first', async () => {
    const tenant = await t.createTenant();
    const admin = t.client(tenant.liveKey);
    for (let i = 0; i < 3; i++)
      await admin.unwrap(admin.POST('/api/v1/api-keys', { body: { name: `k${i}`, scopes: ['*'] } }));
    const page = await unwrapEnvelope(admin.GET('/api/v1/api-keys', { params: { query: { page: 2, pageSize: 2 } } }));
    // The tenant's LIVE key and three new ones; its TEST key lives in the other environment.
    expect(page.pagination).toEqual({ page: 2, pageSize: 2, totalItems: 4, totalPages: 2, hasMore: false });
    const names = [];
    for await (const key of admin.paginate('/api/v1/api-keys', { params: { query: { pageSize: 2 } } }))
      names.push(key.name);
    expect(names.slice(0, 3)).toEqual(['k2', 'k1', 'k0']);
    expect(names).toHaveLength(4);
  });

  it('refuses to mint a key in the other environment, or with a past expiry', async () => {
    const tenant = await t.createTenant();
    const test = t.client(tenant.testKey);
    const cross = await test.POST('/api/v1/api-keys', {
      body: { name: 'escalate', scopes: ['*'], environment: 'LIVE' },
    });
    expect(cross.response.status).toBe(403);
    expect(cross.error).toMatchObject({ error: { code: 'insufficient_scope' } });
    const past = await test.POST('/api/v1/api-keys', {
      body: { name: 'old', scopes: ['*'], expiresAt: '2020-01-01T00:00:00Z' },
    });
    expect(past.response.status).toBe(400);
    const created = await test.unwrap(
      test.POST('/api/v1/api-keys', { body: { name: 'same env', scopes: ['surveys:*'] } }),
    );
    expect(created.environment).toBe('TEST');
    expect(created.key).toMatch(/^svc_test_/);
  });

  it('never lets a key without * manage keys, so no key can mint more power than it has', async () => {
    const tenant = await t.createTenant();
    const narrow = await t.createKey(tenant.organizationId, {
      scopes: ['surveys:*', 'responses:*', 'analytics:*', 'webhooks:*', 'respondents:*'],
    });
    const attempt = await t.client(narrow.key).POST('/api/v1/api-keys', { body: { name: 'wider', scopes: ['*'] } });
    expect(attempt.response.status).toBe(403);
  });
});

describe('isolation', () => {
  it('hides keys of other organizations and of the other environment (404, never 403)', async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const bKeys = await t.client(b.liveKey).unwrap(t.client(b.liveKey).GET('/api/v1/api-keys'));
    const bKeyId = bKeys[0]!.id;
    for (const probe of [a.liveKey, a.testKey, b.testKey]) {
      const result = await t.client(probe).DELETE('/api/v1/api-keys/{id}', { params: { path: { id: bKeyId } } });
      expect(result.response.status).toBe(404);
      expect(result.error).toMatchObject({ error: { code: 'not_found' } });
    }
    // B's key still works; A's listings never show B's keys.
    expect((await t.client(b.liveKey).GET('/api/v1/me')).response.status).toBe(200);
    const aKeys = await t
      .client(a.liveKey)
      .unwrap(t.client(a.liveKey).GET('/api/v1/api-keys', { params: { query: { includeRevoked: true } } }));
    expect(aKeys.every((k) => k.environment === 'LIVE')).toBe(true);
    expect(aKeys.map((k) => k.id)).not.toContain(bKeyId);
  });
});
