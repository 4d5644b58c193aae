/**
 * Which refusal a request meets, through real HTTP: long URLs and oversized headers answer in the envelope with a
 * documented status, before anything else; a reused Idempotency-Key is judged before the body is validated; the
 * failed-authentication throttle refuses failures, never a valid key, and describes itself in RateLimit-* headers.
 */
import { SurveyServiceError } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDocumented, raw, type RawReply } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

type Body = {
  error?: { code: string; message: string; details?: Array<{ path?: string; code: string; message: string }> };
};

let t: TestService;
let tenant: Awaited<ReturnType<typeof tenantWithRaisedLimits>>;
beforeAll(async () => {
  t = await startTestService({ authFailuresPerMinute: 100_000 });
  tenant = await tenantWithRaisedLimits(t);
});
afterAll(async () => {
  await t?.close();
});

const bodyOf = (answer: RawReply) => answer.body as Body;

/** The SDK's typed error of a call that must fail. */
async function refusal(call: Promise<unknown>): Promise<SurveyServiceError> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(SurveyServiceError);
  return outcome as SurveyServiceError;
}

describe('a long URL or oversized headers are answered in the envelope, with a documented status', () => {
  it('a 120,000-character query string is 414 uri_too_long', async () => {
    const answer = await raw(t.url, 'GET', `/api/v1/surveys?search=${'a'.repeat(120_000)}`, {
      headers: { authorization: `Bearer ${tenant.liveKey}` },
    });
    expectDocumented('/api/v1/surveys', 'GET', answer);
    expect(answer.status).toBe(414);
    expect(bodyOf(answer).error?.code).toBe('uri_too_long');
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
    // Through the SDK, the same request is a typed error with the envelope's code.
    const error = await refusal(tenant.live.surveys.list({ search: 'a'.repeat(120_000) }));
    expect(error.status).toBe(414);
    expect(error.code).toBe('uri_too_long');
  });

  it('also without a key and on a public operation, before anything else', async () => {
    for (const [template, path] of [
      ['/api/v1/me', '/api/v1/me'],
      ['/health/live', '/health/live'],
    ] as const) {
      const answer = await raw(t.url, 'GET', `${path}?x=${'b'.repeat(70_000)}`);
      expectDocumented(template, 'GET', answer);
      expect(answer.status, path).toBe(414);
    }
  });

  it('a URL within the limit is read as usual: a 60,000-byte query string reaches validation', async () => {
    const filters = encodeURIComponent(
      JSON.stringify({ department: { in: Array.from({ length: 2_000 }, (_, i) => `Dept ${i}`) } }),
    ).slice(0, 60_000);
    const answer = await raw(t.url, 'GET', `/api/v1/surveys?search=${filters}`, {
      headers: { authorization: `Bearer ${tenant.liveKey}` },
    });
    expectDocumented('/api/v1/surveys', 'GET', answer);
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).error?.details?.[0]).toMatchObject({ path: '/query/search', code: 'max_length' });
  });

  it('request headers beyond what the server reads are 431 headers_too_large, in the envelope', async () => {
    const answer = await raw(t.url, 'GET', '/api/v1/surveys', {
      headers: { authorization: `Bearer ${tenant.liveKey}`, 'x-padding': 'p'.repeat(300_000) },
    });
    expectDocumented('/api/v1/surveys', 'GET', answer);
    expect(answer.status).toBe(431);
    expect(bodyOf(answer).error?.code).toBe('headers_too_large');
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
  });
});

describe('a reused Idempotency-Key is compared before the body is validated', () => {
  const post = (idempotencyKey: string, body: string) =>
    raw(t.url, 'POST', '/api/v1/surveys', {
      headers: {
        authorization: `Bearer ${tenant.liveKey}`,
        'content-type': 'application/json',
        'idempotency-key': idempotencyKey,
      },
      body,
    });

  it('another body that is also invalid is 409 idempotency_conflict, not 400', async () => {
    const first = await tenant.live.surveys.create(
      { title: 'Keyed', questions: [{ type: 'nps', text: 'Recommend us?' }] },
      { idempotencyKey: 'reuse-invalid' },
    );
    expect(first.title).toBe('Keyed');
    const invalid = await refusal(tenant.live.surveys.create({ title: '' }, { idempotencyKey: 'reuse-invalid' }));
    expect([invalid.status, invalid.code]).toEqual([409, 'idempotency_conflict']);
    // Whatever makes the other body invalid: a character nothing can store, JSON that does not parse.
    for (const body of [
      '{"title":"a\\u0000b"}',
      '{"title":',
      '{"title":"Keyed","questions":[{"type":"nps","text":"Recommend us?"}],"extra":1}',
    ]) {
      const answer = await post('reuse-invalid', body);
      expectDocumented('/api/v1/surveys', 'POST', answer, body);
      expect(answer.status, body).toBe(409);
      expect(bodyOf(answer).error?.code, body).toBe('idempotency_conflict');
    }
    // The identical request is still replayed.
    const replay = await post(
      'reuse-invalid',
      JSON.stringify({ questions: [{ text: 'Recommend us?', type: 'nps' }], title: 'Keyed' }),
    );
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('another valid body is 409 too, and nothing is created', async () => {
    await tenant.live.surveys.create({ title: 'Once' }, { idempotencyKey: 'reuse-valid' });
    const other = await refusal(tenant.live.surveys.create({ title: 'Twice' }, { idempotencyKey: 'reuse-valid' }));
    expect([other.status, other.code]).toEqual([409, 'idempotency_conflict']);
    expect(await tenant.live.surveys.list({ search: 'Twice' })).toEqual([]);
  });

  it('a first use with an invalid body is 400 and does not consume the key', async () => {
    const invalid = await refusal(tenant.live.surveys.create({ title: '' }, { idempotencyKey: 'first-invalid' }));
    expect([invalid.status, invalid.code]).toEqual([400, 'validation_failed']);
    const again = await refusal(
      tenant.live.surveys.create({ title: '', description: 'other' }, { idempotencyKey: 'first-invalid' }),
    );
    expect([again.status, again.code]).toEqual([400, 'validation_failed']);
    const fixed = await tenant.live.surveys.create({ title: 'Fixed' }, { idempotencyKey: 'first-invalid' });
    expect(fixed.title).toBe('Fixed');
  });
});

describe('the failed-authentication throttle refuses failures, not valid keys', () => {
  it('a valid key passes from an address over its failure budget; failures get 429 with Retry-After and RateLimit-*', async () => {
    const small = await startTestService({ authFailuresPerMinute: 5 });
    try {
      const neighbour = await small.createTenant();
      const unknown = `svc_live_${'0'.repeat(64)}`;
      for (let i = 0; i < 5; i++)
        expect(
          (await raw(small.url, 'GET', '/api/v1/me', { headers: { authorization: `Bearer ${unknown}` } })).status,
        ).toBe(401);

      // A customer behind the same address, with a valid key: served, with its own budget's headers.
      const valid = await raw(small.url, 'GET', '/api/v1/me', {
        headers: { authorization: `Bearer ${neighbour.liveKey}` },
      });
      expectDocumented('/api/v1/me', 'GET', valid);
      expect(valid.status).toBe(200);
      expect(valid.headers['ratelimit-limit']).toBe('300');
      const me = await small.client(neighbour.testKey).account.me();
      expect(me.organization.plan).toBe('PRO');

      // The failures are what is refused: an unknown key, a malformed one, none at all.
      for (const headers of [{ authorization: `Bearer ${unknown}` }, { authorization: 'Bearer nope' }, {}] as Array<
        Record<string, string>
      >) {
        const throttled = await raw(small.url, 'GET', '/api/v1/me', { headers });
        expectDocumented('/api/v1/me', 'GET', throttled, JSON.stringify(headers));
        expect(throttled.status).toBe(429);
        expect(bodyOf(throttled).error?.details?.[0]?.code).toBe('auth_failures');
        expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
        expect(throttled.headers['ratelimit-limit']).toBe('5');
        expect(throttled.headers['ratelimit-remaining']).toBe('0');
        expect(Number(throttled.headers['ratelimit-reset'])).toBeGreaterThan(0);
        expect(Number(throttled.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
      }
    } finally {
      await small.close();
    }
  });
});
