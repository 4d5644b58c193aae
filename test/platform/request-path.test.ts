/**
 * The request path, through real HTTP and a real PostgreSQL: bodies are never coerced; routing and authentication
 * agree for every spelling of every path; no input gives a 5xx; one 400 lists every problem with codes;
 * protocol edges (405 + Allow, 415, duplicate Authorization, failed-auth throttle, documented statuses, the
 * access log). Every answer here is checked against the contract (status documented, body valid).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { underScimBase } from '../../server/src/modules/scim/errors.js';
import { contract, expectDocumented, raw, type RawReply } from '../helpers/raw-http.js';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, tenantWithRaisedLimits } from '../helpers/surveys.js';

let t: TestService;
let key: string;
let surveyId: string;
beforeAll(async () => {
  t = await startTestService({ authFailuresPerMinute: 100_000 });
  const tenant = await tenantWithRaisedLimits(t);
  key = tenant.liveKey;
  const created = await call('POST', '/api/v1/surveys', { body: { title: 'Hardening', questions: allTypes } });
  surveyId = (created.body as { data: { id: string } }).data.id;
  expect((await call('POST', `/api/v1/surveys/${surveyId}/launch`)).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

type Body = {
  error?: { code: string; message: string; details?: Array<{ path?: string; code: string; message: string }> };
  data?: Record<string, unknown>;
};

/** A JSON request with the tenant's key; the answer is checked against `template`'s documented responses. */
async function call(
  method: string,
  path: string,
  options: {
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
    template?: string;
    auth?: boolean;
  } = {},
): Promise<RawReply & { body: Body }> {
  const headers: Record<string, string> = {
    ...(options.auth === false ? {} : { authorization: `Bearer ${key}` }),
    ...options.headers,
  };
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const answer = await raw(t.url, method, path, { headers, body: payload });
  const template = options.template ?? templateOf(path.split('?')[0]!);
  if (template) expectDocumented(template, method, answer);
  return answer as RawReply & { body: Body };
}

/** The documented template of a canonical path (literal segments win, as in the router). */
function templateOf(path: string): string | undefined {
  const literals = (template: string) => template.split('/').filter((part) => part && !part.startsWith('{')).length;
  return Object.keys(contract.paths)
    .sort((a, b) => literals(b) - literals(a))
    .find((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
}

const details = (answer: { body: Body }) => answer.body.error?.details ?? [];

describe('1. bodies are never coerced', () => {
  it('refuses a body value of the wrong JSON type with 400 naming the field', async () => {
    const answer = await call('POST', '/api/v1/surveys', {
      body: { title: 123, questions: [{ type: 'nps', text: true }] },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('validation_failed');
    expect(details(answer)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/title', code: 'type' }),
        expect.objectContaining({ path: '/body/questions/0/text', code: 'type' }),
      ]),
    );
  });

  it('does not turn a null or true NPS answer into a number', async () => {
    for (const value of [null, true, '7']) {
      const answer = await call('POST', `/api/v1/surveys/${surveyId}/responses`, {
        body: {
          answers: [
            { questionId: 'q_1', value },
            { questionId: 'q_2', value: 3 },
          ],
        },
      });
      expect(answer.status, JSON.stringify(value)).toBe(400);
      expect(details(answer)[0]).toMatchObject({ path: '/body/answers/0/value' });
    }
    const listed = await call('GET', `/api/v1/surveys/${surveyId}/responses`);
    expect((listed.body.data as unknown as unknown[]).length).toBe(0);
  });

  it('stores respondent attributes exactly as sent, the same through PUT and sync, __proto__ included', async () => {
    const attributes = { one: 1, zero: 0, f: 'false', t: true, n: null, big: 1.5e300, __proto__: 'data' };
    const rawBody = `{"email":"exact@example.com","attributes":${JSON.stringify(attributes).replace('}', ',"__proto__":"data"}')}}`;
    const put = await call('PUT', '/api/v1/respondents/E-exact', { rawBody });
    expect(put.status).toBe(201);
    const expected = JSON.parse(
      `{"one":1,"zero":0,"f":"false","t":true,"n":null,"big":1.5e300,"__proto__":"data"}`,
    ) as Record<string, unknown>;
    const stored = (put.body.data as { attributes: Record<string, unknown> }).attributes;
    expect(Object.keys(stored).sort()).toEqual(Object.keys(expected).sort());
    expect(JSON.stringify(stored, Object.keys(expected).sort())).toBe(
      JSON.stringify(expected, Object.keys(expected).sort()),
    );

    const syncBody = `{"mode":"upsert","respondents":[{"externalId":"E-exact-sync","email":"exact@example.com","attributes":${JSON.stringify(attributes).replace('}', ',"__proto__":"data"}')}}]}`;
    const started = await call('POST', '/api/v1/respondents/sync', { rawBody: syncBody });
    expect(started.status).toBe(202);
    await waitForJob((started.body.data as { jobId: string }).jobId);
    const viaSync = await call('GET', '/api/v1/respondents/E-exact-sync');
    expect((viaSync.body.data as { attributes: unknown }).attributes).toEqual(stored);
  });

  it('refuses 1e400 (not representable) instead of storing null', async () => {
    const answer = await call('PUT', '/api/v1/respondents/E-huge', {
      rawBody: '{"email":"h@example.com","attributes":{"x":1e400}}',
    });
    expect(answer.status).toBe(400);
    expect(details(answer)).toEqual([expect.objectContaining({ path: '/body/attributes/x', code: 'out_of_range' })]);
  });
});

/** The finished sync job, read through `call` (each answer checked against the contract). */
function waitForJob(jobId: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const data = (await call('GET', `/api/v1/respondents/sync/${jobId}`)).body.data as { status: string };
      return (data.status === 'completed' || data.status === 'failed') && data;
    },
    30_000,
    `sync ${jobId} to finish`,
  );
}

/** Spellings of a path that must not reach its operation: all are 404 (or 405), with or without a key. */
function variants(path: string): string[] {
  const upper = path.replace('/api/v1', '/API/v1');
  const v1 = path.replace('/api/v1', '/api/V1');
  const lastUpper = path.replace(/\/([a-z])([a-z-]*)$/, (_m, a: string, b: string) => `/${a.toUpperCase()}${b}`);
  return [
    upper,
    v1,
    lastUpper,
    `${path}/`,
    path.replace('/api/v1/', '/api/v1//'),
    `/${path}`,
    path.replace('/api/', '/api/./'),
    `/api/v1/x/..${path.slice('/api/v1'.length)}`,
    path.replace('/api/', '/api/%2e/'),
    path.replace('/api/v1', '/api/v%31'),
    path.replace(/\/([a-z])/, (_m, c: string) => `/%${c.charCodeAt(0).toString(16)}`),
    ...(/\/[a-z-]+$/.test(path) && !path.endsWith('_01JD3M8Q4W6T9ZK2F7X1B5N0C8') ? [`${path}%2F`] : []),
    `${path}/..`,
  ].filter((variant) => variant !== path);
}

describe('2. authentication covers every route the router can reach', () => {
  const concrete = (template: string) => template.replace(/\{[^}]+\}/g, 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8');

  it('answers every spelling of every path with 401, 404 or 405 and never runs a handler unauthenticated', async () => {
    let checked = 0;
    for (const [template, item] of Object.entries(contract.paths)) {
      for (const method of Object.keys(item).filter((key) => key !== 'parameters')) {
        const path = concrete(template);
        for (const variant of variants(path)) {
          for (const withKey of [false, true]) {
            const answer = await raw(t.url, method.toUpperCase(), variant, {
              headers: withKey ? { authorization: `Bearer ${key}` } : {},
            });
            checked++;
            expect(
              [404, 405],
              `${method} ${variant} (key: ${withKey}) → ${answer.status} ${answer.text.slice(0, 200)}`,
            ).toContain(answer.status);
            // Under the SCIM base URL, however spelled, the refusal is a SCIM error; elsewhere the envelope's.
            if (underScimBase(variant)) {
              expect(answer.headers['content-type'], variant).toMatch(/^application\/scim\+json/);
              expect((answer.body as { status?: string }).status, variant).toBe(String(answer.status));
            } else expect((answer.body as Body).error?.code, variant).toMatch(/^(not_found|method_not_allowed)$/);
          }
        }
        // The canonical spelling without a key: 401 (or served, for the public operations).
        const canonical = await raw(t.url, method.toUpperCase(), path);
        expectDocumented(template, method.toUpperCase(), canonical);
        if ((item[method]!.security ?? [1]).length > 0) expect(canonical.status, `${method} ${path}`).toBe(401);
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('answers an unauthenticated request before reading its body', async () => {
    const answer = await headersOnly('POST', '/api/v1/surveys', {
      'content-type': 'application/json',
      'content-length': String(50 * 1024 * 1024),
    });
    expect(answer.status).toBe(401);
    expectDocumented('/api/v1/surveys', 'POST', answer);
  });

  it('refuses a Content-Length over the route limit with 413 before reading', async () => {
    const answer = await headersOnly('POST', '/api/v1/surveys', {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(65 * 1024),
    });
    expect(answer.status).toBe(413);
    expectDocumented('/api/v1/surveys', 'POST', answer);
    const sync = await headersOnly('POST', '/api/v1/respondents/sync', {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(65 * 1024 * 1024),
    });
    expect(sync.status).toBe(413);
  });
});

/** Sends only the headers of a request (its body never comes) and returns the answer. */
function headersOnly(method: string, path: string, headers: Record<string, string>): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const url = new URL(t.url);
    import('node:http').then(({ request }) => {
      const req = request({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: JSON.parse(text) }),
        );
      });
      req.on('error', (error: NodeJS.ErrnoException) =>
        error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error),
      );
      req.flushHeaders();
      req.write('{');
    }, reject);
  });
}

describe('4. no input gives a 5xx', () => {
  it('NUL and lone surrogates in body strings and member names are 400 invalid_character', async () => {
    const answer = await call('POST', '/api/v1/surveys', {
      rawBody: '{"title":"a\\u0000b","description":"\\ud800x","questions":[{"type":"nps","text":"ok"}]}',
    });
    expect(answer.status).toBe(400);
    expect(details(answer)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/title', code: 'invalid_character' }),
        expect.objectContaining({ path: '/body/description', code: 'invalid_character' }),
      ]),
    );
    const name = await call('PUT', '/api/v1/respondents/E-nul-name', {
      rawBody: '{"email":"x@example.com","attributes":{"a\\u0000":"x"}}',
    });
    expect(name.status).toBe(400);
  });

  it('an unsupported Unicode escape for jsonb (\\u0000 in an attribute) is 400, not a failed write', async () => {
    const answer = await call('PUT', '/api/v1/respondents/E-escape', {
      rawBody: '{"email":"x@example.com","attributes":{"note":"\\u0000"}}',
    });
    expect(answer.status).toBe(400);
    expect(details(answer)[0]).toMatchObject({ path: '/body/attributes/note', code: 'invalid_character' });
  });

  it('NUL in the path and the query is 400 (or 404 for an undecodable path)', async () => {
    const inPath = await call('GET', '/api/v1/respondents/a%00b');
    expect(inPath.status).toBe(400);
    expect(details(inPath)[0]).toMatchObject({ path: '/path/externalId', code: 'invalid_character' });
    const inQuery = await call('GET', '/api/v1/respondents?email=a%00b');
    expect(inQuery.status).toBe(400);
    expect(details(inQuery)[0]).toMatchObject({ path: '/query/email', code: 'invalid_character' });
    const surrogate = await call('GET', '/api/v1/respondents?department=%ED%A0%80');
    expect([200, 400]).toContain(surrogate.status);
    const undecodable = await call('GET', '/api/v1/respondents/%ED%A0%80');
    expect([400, 404]).toContain(undecodable.status);
  });

  it('impossible date-times and dates are 400 format', async () => {
    const answer = await call('GET', `/api/v1/surveys/${surveyId}/responses?submittedAfter=2024-01-01T25%3A00%3A00Z`);
    expect(answer.status).toBe(400);
    expect(details(answer)[0]).toMatchObject({ path: '/query/submittedAfter', code: 'format' });
    const leap = await call('GET', `/api/v1/surveys/${surveyId}/responses?submittedBefore=2024-01-01T23%3A59%3A60Z`);
    expect(leap.status).toBe(400);
    const hire = await call('PUT', '/api/v1/respondents/E-date', {
      body: { email: 'd@example.com', hireDate: '2024-02-30' },
    });
    expect(hire.status).toBe(400);
    expect(details(hire)[0]).toMatchObject({ path: '/body/hireDate', code: 'format' });
  });

  it('page=1e400 and page=Infinity are 400', async () => {
    for (const page of ['1e400', 'Infinity', '-Infinity', 'NaN', '1.5', '99999999999999999999']) {
      const answer = await call('GET', `/api/v1/surveys?page=${page}`);
      expect(answer.status, page).toBe(400);
      expect(details(answer)[0]?.path).toBe('/query/page');
    }
  });

  it('deeply nested values are 400 too_deep, not a stack overflow', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const answer = await call('PUT', '/api/v1/respondents/E-deep', {
      rawBody: `{"email":"x@example.com","attributes":{"x":${deep}}}`,
    });
    expect(answer.status).toBe(400);
    expect(details(answer)[0]).toMatchObject({ code: 'too_deep' });
    const arrays = await call('POST', '/api/v1/surveys', {
      rawBody: `{"title":${'['.repeat(20000)}${']'.repeat(20000)}}`,
    });
    expect(arrays.status).toBe(400);
  });

  it('a required body that is missing is 400 required, for PATCH too (found by the fuzz suite)', async () => {
    for (const [method, path] of [
      ['PATCH', `/api/v1/surveys/${surveyId}`],
      ['POST', '/api/v1/surveys'],
      ['PUT', '/api/v1/respondents/E-empty'],
    ] as const) {
      const answer = await call(method, path, { rawBody: '' });
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(details(answer)).toEqual([expect.objectContaining({ path: '/body', code: 'required' })]);
    }
  });

  it('a 404 does not echo a 3,000-character id', async () => {
    const id = 'x'.repeat(3000);
    for (const path of [`/api/v1/respondents/${id}`, `/api/v1/surveys/${id}`, `/api/v1/respondents/sync/${id}`]) {
      const answer = await call('GET', path);
      expect(answer.status).toBe(404);
      expect(answer.body.error!.message.length).toBeLessThan(200);
    }
  });

  it('in a sync, such records are per-record errors; the job completes and the next sync runs', async () => {
    const rawBody = `{"mode":"upsert","respondents":[
      {"externalId":"S-ok","email":"ok@example.com"},
      {"externalId":"S-nul","email":"n@example.com","firstName":"a\\u0000b"},
      {"externalId":"S-sur","email":"s@example.com","lastName":"\\udc00"},
      {"externalId":"S-date","email":"d@example.com","hireDate":"2024-02-30"},
      {"externalId":"S-key","email":"k@example.com","attributes":{"\\u0000":1}}]}`;
    const started = await call('POST', '/api/v1/respondents/sync', { rawBody });
    expect(started.status).toBe(202);
    const job = (await waitForJob((started.body.data as { jobId: string }).jobId)) as {
      status: string;
      errors: Array<{ index: number; path?: string }>;
    };
    expect(job.status).toBe('completed');
    expect(job.errors.map((e) => e.index)).toEqual([1, 2, 3, 4]);
    // A number JSON cannot carry to the worker (1e400) is that record's error too, naming its field; never a number.
    const infinite = await call('POST', '/api/v1/respondents/sync', {
      rawBody:
        '{"mode":"upsert","respondents":[{"externalId":"S-inf","email":"i@example.com","attributes":{"x":1e400}}]}',
    });
    expect(infinite.status).toBe(202);
    const held = (await waitForJob((infinite.body.data as { jobId: string }).jobId)) as {
      status: string;
      errors: Array<{ index: number; path?: string; code?: string }>;
    };
    expect(held.status).toBe('completed');
    expect(held.errors).toEqual([expect.objectContaining({ index: 0, path: '/attributes/x', code: 'out_of_range' })]);
    const next = await call('POST', '/api/v1/respondents/sync', {
      body: { mode: 'upsert', respondents: [{ externalId: 'S-next', email: 'next@example.com' }] },
    });
    expect(next.status).toBe(202);
    expect(((await waitForJob((next.body.data as { jobId: string }).jobId)) as { status: string }).status).toBe(
      'completed',
    );
  });
});

describe('5. one validation pass reports every problem', () => {
  it('lists schema and semantic problems together, each with path and code', async () => {
    const answer = await call('POST', `/api/v1/surveys/${surveyId}/responses`, {
      body: {
        answers: [
          { questionId: 'q_1', value: 'great' },
          { questionId: 'q_2', value: true },
          { questionId: 'q_3', value: 'c_9' },
        ],
        extra: 1,
      },
    });
    expect(answer.status).toBe(400);
    expect(details(answer)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/answers/0/value', code: 'answer_type' }),
        expect.objectContaining({ path: '/body/answers/1/value', code: 'type' }),
        expect.objectContaining({ path: '/body/answers/2/value', code: 'not_found' }),
        expect.objectContaining({ path: '/body/extra', code: 'unknown_field' }),
      ]),
    );
    for (const detail of details(answer)) {
      expect(detail.code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(detail.message.length).toBeGreaterThan(5);
    }
  });

  it('a text answer to an NPS question says what the question takes, not its range', async () => {
    const answer = await call('POST', `/api/v1/surveys/${surveyId}/responses`, {
      body: {
        answers: [
          { questionId: 'q_1', value: 'ten' },
          { questionId: 'q_2', value: 3 },
        ],
      },
    });
    expect(details(answer)).toEqual([
      expect.objectContaining({
        path: '/body/answers/0/value',
        code: 'answer_type',
        message: expect.stringMatching(/nps question.*a string/),
      }),
    ]);
    const range = await call('POST', `/api/v1/surveys/${surveyId}/responses`, {
      body: {
        answers: [
          { questionId: 'q_1', value: 11 },
          { questionId: 'q_2', value: 3 },
        ],
      },
    });
    expect(details(range)).toEqual([expect.objectContaining({ code: 'out_of_range' })]);
  });
});

describe('6. protocol edges', () => {
  it('a known path with a method it lacks is 405 with Allow listing the documented methods', async () => {
    const answer = await call('PUT', `/api/v1/surveys/${surveyId}`, { body: {} });
    expect(answer.status).toBe(405);
    expect(answer.body.error?.code).toBe('method_not_allowed');
    expect(answer.headers.allow).toBe('GET, PATCH, DELETE');
    const unauthenticated = await call('DELETE', '/api/v1/me', { auth: false });
    expect(unauthenticated.status).toBe(405);
    expect(unauthenticated.headers.allow).toBe('GET');
  });

  it('another charset or a non-JSON media type is 415', async () => {
    for (const type of [
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/jsonx',
    ]) {
      const answer = await call('POST', '/api/v1/surveys', {
        rawBody: '{"title":"x","questions":[{"type":"nps","text":"q"}]}',
        headers: { 'content-type': type },
      });
      expect(answer.status, type).toBe(415);
      expect(answer.body.error?.code).toBe('unsupported_media_type');
    }
    const utf8 = await call('POST', '/api/v1/surveys', {
      rawBody: '{"title":"x","questions":[{"type":"nps","text":"q"}]}',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(utf8.status).toBe(201);
  });

  it('two Authorization headers are refused with 401', async () => {
    const answer = await raw(t.url, 'GET', '/api/v1/me', {
      rawHeaders: ['Authorization', `Bearer ${key}`, 'Authorization', `Bearer ${key}`],
    });
    expect(answer.status).toBe(401);
    expectDocumented('/api/v1/me', 'GET', answer);
    expect((answer.body as Body).error?.message).toMatch(/exactly one Authorization/);
  });

  it('unknown query parameters on /me are a documented 400', async () => {
    const answer = await call('GET', '/api/v1/me?verbose=1');
    expect(answer.status).toBe(400);
    expect(details(answer)[0]).toMatchObject({ path: '/query/verbose', code: 'unknown_field' });
  });
});

describe('6. failed authentication is throttled; 4. an unreachable database is 503', () => {
  /** Drops the service's database under it (connections terminated): every new connection then gets 3D000. */
  async function dropUnder(service: TestService): Promise<void> {
    await service.database.drop();
  }
  async function closeQuietly(service: TestService): Promise<void> {
    // A bound, not a pause: a service whose database is gone may not close cleanly; the test does not wait forever.
    await Promise.race([service.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }

  it('answers 429 rate_limited with Retry-After to the failures of a source that failed too often, never to its valid keys', async () => {
    const small = await startTestService({ authFailuresPerMinute: 20 });
    try {
      const tenant = await small.createTenant();
      for (let i = 0; i < 20; i++)
        expect(
          (
            await raw(small.url, 'GET', '/api/v1/me', {
              headers: { authorization: `Bearer svc_live_${'0'.repeat(64)}` },
            })
          ).status,
        ).toBe(401);
      expect(
        (await raw(small.url, 'GET', '/api/v1/me', { headers: { authorization: `Bearer ${tenant.liveKey}` } })).status,
      ).toBe(200);
      const throttled = await raw(small.url, 'GET', '/api/v1/me', {
        headers: { authorization: `Bearer svc_live_${'0'.repeat(64)}` },
      });
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
      expect((throttled.body as Body).error?.details?.[0]?.code).toBe('auth_failures');
      expectDocumented('/api/v1/me', 'GET', throttled);
      // A malformed key needs no lookup: without a database (where a lookup would answer 503), it is still a 429.
      await dropUnder(small);
      const malformed = await raw(small.url, 'GET', '/api/v1/me', {
        headers: { authorization: 'Bearer svc_live_nope' },
      });
      expect(malformed.status).toBe(429);
      expectDocumented('/api/v1/me', 'GET', malformed);
    } finally {
      await closeQuietly(small);
    }
  });

  it('a dropped database (3D000) answers 503 with Retry-After, and readiness says not ready', async () => {
    const doomed = await startTestService();
    try {
      const tenant = await doomed.createTenant();
      expect(
        (await raw(doomed.url, 'GET', '/api/v1/surveys', { headers: { authorization: `Bearer ${tenant.liveKey}` } }))
          .status,
      ).toBe(200);
      await dropUnder(doomed);
      for (const key of [tenant.liveKey, tenant.testKey]) {
        const answer = await raw(doomed.url, 'GET', '/api/v1/surveys', { headers: { authorization: `Bearer ${key}` } });
        expect(answer.status).toBe(503);
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
        expect((answer.body as Body).error?.code).toBe('unavailable');
        expectDocumented('/api/v1/surveys', 'GET', answer, 'database dropped', [503]);
      }
      const ready = await raw(doomed.url, 'GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.headers['retry-after']).toBeDefined();
      expectDocumented('/health/ready', 'GET', ready, 'database dropped', [503]);
    } finally {
      await closeQuietly(doomed);
    }
  });
});

describe('6. the access log', () => {
  it('records the route template and our own ids, never externalIds or e-mail addresses from paths', async () => {
    const lines: string[] = [];
    const { pino } = await import('pino');
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logged = await startTestService({}, pino({ level: 'info' }, sink));
    try {
      const tenant = await logged.createTenant();
      const headers = { authorization: `Bearer ${tenant.liveKey}` };
      await raw(logged.url, 'GET', '/api/v1/respondents/jane.doe%40example.com', { headers });
      await raw(logged.url, 'GET', '/api/v1/respondents/EMP-secret-4711', { headers });
      await raw(logged.url, 'GET', '/api/v1/surveys/srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8', { headers });
      // The three requests' lines (the log's line for a request follows its answer): what is asserted on below.
      const requests = await eventually(
        () => {
          const logged = lines.filter((line) => line.includes('"msg":"request"'));
          return logged.length >= 3 && logged;
        },
        5_000,
        'the three requests logged',
      );
      const text = requests.join('\n');
      expect(text).not.toMatch(/jane|example\.com|EMP-secret-4711/);
      expect(text).toContain('"route":"/api/v1/respondents/{externalId}"');
      expect(text).toContain('"id":"srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8"');
    } finally {
      await logged.close();
    }
  });
});
