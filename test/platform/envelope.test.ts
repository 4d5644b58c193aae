/**
 * Every answer wears the envelope with a request id — successes and every error path: the validator's, the
 * body parser's, unknown routes and methods, and operations not available yet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../server/src/modules/handlers.js';
import { loadContract, operationsOf } from '../../server/src/http/contract.js';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let key: string;
beforeAll(async () => {
  t = await startTestService();
  key = (await t.createTenant()).liveKey;
});
afterAll(async () => {
  await t?.close();
});

interface Envelope {
  data?: unknown;
  error?: {
    code: string;
    status: number;
    message: string;
    details?: Array<{ path?: string; message: string; code?: string }>;
  };
  meta: { requestId: string; timestamp: string; apiVersion: string };
}

async function call(path: string, init: RequestInit & { auth?: boolean } = {}) {
  const headers = new Headers(init.headers);
  if (init.auth !== false) headers.set('authorization', `Bearer ${key}`);
  const response = await fetch(`${t.url}${path}`, { ...init, headers });
  const text = await response.text();
  const body = JSON.parse(text) as Envelope;
  // The envelope's invariants, on every answer.
  expect(body.meta.requestId).toMatch(/^req_[A-Za-z0-9_-]{8,64}$/);
  expect(response.headers.get('x-request-id')).toBe(body.meta.requestId);
  expect(body.meta.apiVersion).toBe('v1');
  expect(body.meta.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(text).not.toMatch(/<html|node_modules|\bat \w+ \(|SELECT|kysely/i);
  if (body.error) {
    expect(body.data).toBeUndefined();
    expect(body.error.status).toBe(response.status);
  }
  return { response, body };
}

describe('the envelope', () => {
  it('wraps a success with data and meta, and echoes a well-formed X-Request-Id', async () => {
    const { response, body } = await call('/api/v1/me', { headers: { 'x-request-id': 'req_client-chosen-id-1' } });
    expect(response.status).toBe(200);
    expect(body.data).toBeTypeOf('object');
    expect(body.meta.requestId).toBe('req_client-chosen-id-1');
  });

  it('replaces an ill-formed X-Request-Id with its own', async () => {
    const { body } = await call('/api/v1/me', { headers: { 'x-request-id': 'has spaces and <tags>' } });
    expect(body.meta.requestId).not.toContain('<');
  });

  it('gives each request its own id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await call('/api/v1/me')).body.meta.requestId);
    expect(ids.size).toBe(5);
  });

  it('adds pagination to lists', async () => {
    const { body } = await call('/api/v1/api-keys?page=1&pageSize=1');
    expect(body).toMatchObject({ pagination: { page: 1, pageSize: 1, totalItems: 1, totalPages: 1, hasMore: false } });
  });
});

describe('error paths', () => {
  it('400 invalid_json for a body that is not JSON', async () => {
    const { response, body } = await call('/api/v1/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(response.status).toBe(400);
    expect(body.error?.code).toBe('invalid_json');
  });

  it('400 validation_failed listing every problem, with JSON Pointer paths', async () => {
    const { response, body } = await call('/api/v1/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '', scopes: ['nope:read'], extra: true }),
    });
    expect(response.status).toBe(400);
    expect(body.error?.code).toBe('validation_failed');
    const paths = body.error!.details!.map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['/body/name', '/body/extra']));
    expect(paths.some((p) => p?.startsWith('/body/scopes'))).toBe(true);
  });

  it('400 validation_failed for bad and unknown query parameters', async () => {
    const bad = await call('/api/v1/api-keys?pageSize=1000');
    expect(bad.response.status).toBe(400);
    expect(bad.body.error?.details?.[0]?.path).toBe('/query/pageSize');
    const unknown = await call('/api/v1/api-keys?colour=blue');
    expect(unknown.response.status).toBe(400);
    expect(unknown.body.error?.code).toBe('validation_failed');
  });

  it('415 unsupported_media_type for a body that is not JSON', async () => {
    const { response, body } = await call('/api/v1/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'name=x',
    });
    expect(response.status).toBe(415);
    expect(body.error?.code).toBe('unsupported_media_type');
  });

  it('413 payload_too_large beyond the route limit, and nothing is created', async () => {
    const before = await t.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const { response, body } = await call('/api/v1/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(100_000), scopes: ['*'] }),
    });
    expect(response.status).toBe(413);
    expect(body.error?.code).toBe('payload_too_large');
    const after = await t.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('404 not_found for an unknown route, and for an unknown id', async () => {
    const route = await call('/api/v1/no-such-thing');
    expect(route.response.status).toBe(404);
    expect(route.body.error?.code).toBe('not_found');
    const id = await call('/api/v1/api-keys/key_00000000000000000000000000', { method: 'DELETE' });
    expect(id.response.status).toBe(404);
    const malformed = await call('/api/v1/api-keys/%27%3Bdrop', { method: 'DELETE' });
    expect(malformed.response.status).toBe(404);
  });

  it('405 method_not_allowed for a known path with another method', async () => {
    const { response, body } = await call('/api/v1/me', { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(body.error?.code).toBe('method_not_allowed');
  });
});

describe('public routes', () => {
  it('serves the bundled contract at /api/v1/openapi.json without a key', async () => {
    const response = await fetch(`${t.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toContain('/api/v1/respondents/sync');
  });

  it('answers the health probes without a key', async () => {
    expect((await call('/health/live', { auth: false })).body.data).toEqual({ status: 'ok', checks: {} });
    expect((await call('/health/ready', { auth: false })).body.data).toEqual({
      status: 'ok',
      checks: { database: 'ok' },
    });
  });

  it('serves the Redoc page at /docs', async () => {
    const response = await fetch(`${t.url}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).toContain('Survey Service API');
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
  }, 120_000);
});

describe('handlers', () => {
  it('exist for every operation of the contract, and only for those', () => {
    const operationIds = operationsOf(loadContract())
      .map((op) => op.operationId)
      .sort();
    expect(Object.keys(handlers).sort()).toEqual(operationIds);
  });
});

describe('error texts within their bounds', () => {
  it('keeps every message and detail within 1,000 characters however long the value it names', async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await fetch(`${t.url}/api/v1/surveys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'Bounds', questions: [{ type: 'nps', text: 'Recommend us?' }] }),
    });
    const surveyId = ((await created.json()) as { data: { id: string } }).data.id;
    const long = '9'.repeat(1_000);
    const answer = await fetch(`${t.url}/api/v1/surveys/${surveyId}/distribute/preview`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        targeting: {
          filters: [
            { field: 'hireDate', operator: 'equals', value: long },
            { field: 'hireDate', operator: 'in', value: [long, `😀${long.slice(2)}`] },
            { field: `attributes.${'a'.repeat(60)}`, operator: 'contains', value: long },
          ],
        },
      }),
    });
    // A message over its bound would fail the server's own response validation (a 500).
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as Envelope;
    expect(body.error!.details!.length).toBeGreaterThan(0);
    for (const detail of body.error!.details!) expect(detail.message.length).toBeLessThanOrEqual(1_000);
    expect(body.error!.message.length).toBeLessThanOrEqual(1_000);
  });
});
