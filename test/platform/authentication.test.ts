/** Keys, plans and scopes: every way in, and every way of being refused, over real HTTP through the SDK. */
import { createClient, type SurveyServiceClient } from '@survey-service/sdk';
import { vi, afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

async function getMe(authorization: string | undefined) {
  const response = await fetch(`${t.url}/api/v1/me`, { headers: authorization ? { authorization } : {} });
  return {
    response,
    body: (await response.json()) as {
      error?: { code: string; status: number; message: string };
      data?: unknown;
      meta: { requestId: string };
    },
  };
}

describe('authentication failures', () => {
  const cases: Array<[string, () => Promise<string | undefined>]> = [
    ['no Authorization header', async () => undefined],
    ['another scheme', async () => `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['Bearer with nothing', async () => 'Bearer '],
    ['a malformed key', async () => 'Bearer svc_live_not-hex'],
    ['an uppercase-hex key', async () => `Bearer svc_live_${'A'.repeat(64)}`],
    ['a key of the wrong length', async () => `Bearer svc_live_${'a'.repeat(63)}`],
    ['an unknown but well-formed key', async () => `Bearer svc_live_${'0'.repeat(64)}`],
    [
      'a revoked key',
      async () => {
        const org = await t.createOrganization();
        const { id, key } = await t.createKey(org);
        await t.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).execute();
        return `Bearer ${key}`;
      },
    ],
    [
      'an expired key',
      async () => {
        const org = await t.createOrganization();
        const { key } = await t.createKey(org, { expiresAt: new Date(Date.now() - 1000) });
        return `Bearer ${key}`;
      },
    ],
  ];
  for (const [name, header] of cases) {
    it(`refuses ${name} with 401 unauthenticated in the envelope`, async () => {
      const { response, body } = await getMe(await header());
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(body.error?.code).toBe('unauthenticated');
      expect(body.error?.status).toBe(401);
      expect(body.meta.requestId).toMatch(/^req_/);
      expect(response.headers.get('x-request-id')).toBe(body.meta.requestId);
      expect(JSON.stringify(body)).not.toMatch(/stack|select |at .*\.ts/i);
    });
  }

  it('accepts a valid key and records lastUsedAt', async () => {
    const org = await t.createOrganization();
    const { id, key } = await t.createKey(org);
    const { response } = await getMe(`Bearer ${key}`);
    expect(response.status).toBe(200);
    // Key use is written in the background (bookkeeping pool), after the answer.
    await vi.waitFor(async () => {
      const row = await t.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.last_used_at).toBeInstanceOf(Date);
    });
  });

  it('stores only a hash of the key', async () => {
    const org = await t.createOrganization();
    const { id, key } = await t.createKey(org);
    const row = await t.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key.slice(9));
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('plans', () => {
  for (const plan of ['FREE', 'STARTER'] as const) {
    it(`refuses the ${plan} plan with 403 plan_not_eligible`, async () => {
      const org = await t.createOrganization(plan);
      const { key } = await t.createKey(org);
      const { response, body } = await getMe(`Bearer ${key}`);
      expect(response.status).toBe(403);
      expect(body.error?.code).toBe('plan_not_eligible');
    });
  }
  for (const plan of ['PRO', 'BUSINESS'] as const) {
    it(`lets the ${plan} plan in and reports its limits`, async () => {
      const org = await t.createOrganization(plan);
      const { key } = await t.createKey(org);
      const me = await t.client(key).unwrap(t.client(key).GET('/api/v1/me'));
      expect(me.organization.plan).toBe(plan);
      expect(me.rateLimits.minute.limit).toBe(plan === 'PRO' ? 300 : 1000);
      expect(me.rateLimits.day.limit).toBe(plan === 'PRO' ? 10_000 : 100_000);
    });
  }
});

describe('scopes', () => {
  async function statusWith(scopes: string[], call: (client: SurveyServiceClient) => Promise<{ response: Response }>) {
    const org = await t.createOrganization();
    const { key } = await t.createKey(org, { scopes });
    return (await call(t.client(key))).response.status;
  }
  const listSurveys = (c: SurveyServiceClient) => c.GET('/api/v1/surveys');
  const launch = (c: SurveyServiceClient) =>
    c.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: 'srv_00000000000000000000000000' } } });
  const listKeys = (c: SurveyServiceClient) => c.GET('/api/v1/api-keys');

  it('refuses a key without the operation scope with 403 insufficient_scope naming it', async () => {
    const org = await t.createOrganization();
    const { key } = await t.createKey(org, { scopes: ['responses:read'] });
    const { response, error } = await t.client(key).GET('/api/v1/surveys');
    expect(response.status).toBe(403);
    const body = error as { error: { code: string; message: string; details: Array<{ code: string }> } };
    expect(body.error.code).toBe('insufficient_scope');
    expect(body.error.details[0]?.code).toBe('missing_scope');
    expect(body.error.message).toContain('surveys:read');
  });

  it('grants exact scopes, resource wildcards and *', async () => {
    // Past the scope check the operation answers (or reports not found / not implemented), never 403.
    expect(await statusWith(['surveys:read'], listSurveys)).not.toBe(403);
    expect(await statusWith(['surveys:*'], listSurveys)).not.toBe(403);
    expect(await statusWith(['surveys:*'], launch)).not.toBe(403);
    expect(await statusWith(['*'], launch)).not.toBe(403);
    expect(await statusWith(['surveys:read'], launch)).toBe(403);
    expect(await statusWith(['responses:*'], listSurveys)).toBe(403);
  });

  it('keeps API key management to the * scope', async () => {
    expect(await statusWith(['surveys:*', 'responses:*', 'analytics:*', 'webhooks:*', 'respondents:*'], listKeys)).toBe(
      403,
    );
    expect(await statusWith(['*'], listKeys)).toBe(200);
  });

  it('lets any valid key read /me, whatever its scopes', async () => {
    const org = await t.createOrganization();
    const { key } = await t.createKey(org, { scopes: ['analytics:read'] });
    const me = await t.client(key).unwrap(t.client(key).GET('/api/v1/me'));
    expect(me.apiKey.scopes).toEqual(['analytics:read']);
    expect(me.environment).toBe('LIVE');
  });
});

describe('an SDK client with a bad key', () => {
  it('raises a typed authentication error', async () => {
    const client = createClient({ apiKey: 'svc_live_nope', baseUrl: t.url, retry: { maxRetries: 0 } });
    await expect(client.unwrap(client.GET('/api/v1/me'))).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
  });
});
