/**
 * The SDK's HTTP behaviour against a real HTTP server on 127.0.0.1: retries (how many, how long apart),
 * Idempotency-Key, typed errors, pagination and job polling.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConflictError,
  createClient,
  errorFromResponse,
  NotFoundError,
  paginate,
  PermissionError,
  RateLimitError,
  ServerError,
  SurveyServiceError,
  TimeoutError,
  ValidationError,
  waitFor,
  waitForSyncJob,
  type RetryEvent,
} from '@survey-service/sdk';
import type { fakePaths } from './fake-paths.js';
import { sendData, sendError, startFakeServer, type Handler } from './fake-server.js';

const apiKey = `svc_test_${'a'.repeat(64)}`;
const fastRetry = { baseDelayMs: 20, maxDelayMs: 50 };
let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
});

async function setup(
  handler: Handler,
  options: Parameters<typeof createClient>[0] extends infer C ? Partial<C> : never = {},
) {
  const server = await startFakeServer(handler);
  close = server.close;
  const client = createClient<fakePaths>({ apiKey, baseUrl: server.baseUrl, retry: fastRetry, ...options });
  return { client, requests: server.requests, baseUrl: server.baseUrl };
}

/** Answers the scripted responses in order, then repeats the last one. */
function script(...steps: Handler[]): Handler {
  let i = 0;
  return (req, res) => steps[Math.min(i++, steps.length - 1)]!(req, res);
}

const thing = { id: 'thg_1', name: 'One' };

describe('retries', () => {
  it('retries a 429 after its Retry-After, then returns the data', async () => {
    const { client, requests } = await setup(
      script(
        (_req, res) => sendError(res, 429, 'rate_limited', 'Slow down', { 'retry-after': '1' }),
        (_req, res) => sendData(res, 200, thing),
      ),
    );
    const data = await client.unwrap(client.GET('/things/{id}', { params: { path: { id: 'thg_1' } } }));
    expect(data).toEqual(thing);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('retries a 503 with backoff on a GET', async () => {
    const { client, requests } = await setup(
      script(
        (_req, res) => sendError(res, 503, 'unavailable', 'Database unavailable'),
        (_req, res) => sendData(res, 200, thing),
      ),
    );
    expect(await client.unwrap(client.GET('/things/{id}', { params: { path: { id: 'thg_1' } } }))).toEqual(thing);
    expect(requests).toHaveLength(2);
  });

  it('never retries a 400 and throws a ValidationError with the details and request id', async () => {
    const { client, requests } = await setup((_req, res) =>
      sendError(res, 400, 'validation_failed', 'Invalid request', {}, [{ path: '/body/name', message: 'is required' }]),
    );
    const error = await client.unwrap(client.POST('/things', { body: { name: '' } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(SurveyServiceError);
    expect(error).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'Invalid request',
      requestId: 'req_test',
      details: [{ path: '/body/name', message: 'is required' }],
    });
    expect(requests).toHaveLength(1);
  });

  it('gives every POST an Idempotency-Key and resends the same key and body on retry', async () => {
    const { client, requests } = await setup(
      script(
        (_req, res) => sendError(res, 500, 'internal_error', 'Oops'),
        (req, res) => sendData(res, 201, { id: 'thg_2', name: JSON.parse(req.body).name }),
      ),
    );
    const created = await client.unwrap(client.POST('/things', { body: { name: 'Two' } }));
    expect(created).toEqual({ id: 'thg_2', name: 'Two' });
    expect(requests).toHaveLength(2);
    const [first, second] = requests;
    expect(first!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(second!.body).toBe(first!.body);
    expect(JSON.parse(second!.body)).toEqual({ name: 'Two' });
  });

  it("keeps the caller's Idempotency-Key", async () => {
    const { client, requests } = await setup((_req, res) => sendData(res, 201, thing));
    await client.unwrap(
      client.POST('/things', { body: { name: 'One' }, params: { header: { 'Idempotency-Key': 'my-key-1' } } }),
    );
    expect(requests[0]!.headers['idempotency-key']).toBe('my-key-1');
  });

  it('retries a 409 idempotency_in_progress with the same key, after its Retry-After', async () => {
    const { client, requests } = await setup(
      script(
        (_req, res) =>
          sendError(res, 409, 'idempotency_in_progress', 'The first request is still running', { 'retry-after': '1' }),
        (_req, res) => sendData(res, 201, thing),
      ),
    );
    expect(await client.unwrap(client.POST('/things', { body: { name: 'One' } }))).toEqual(thing);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers['idempotency-key']).toBe(requests[0]!.headers['idempotency-key']);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it.each([
    [501, 'not_implemented'],
    [400, 'validation_failed'],
    [401, 'unauthenticated'],
    [403, 'insufficient_scope'],
    [404, 'not_found'],
    [409, 'invalid_state'],
    [409, 'idempotency_conflict'],
    [422, 'unprocessable'],
  ])('never retries a %i %s', async (status, code) => {
    const { client, requests } = await setup((_req, res) => sendError(res, status, code, 'No'));
    await expect(client.unwrap(client.POST('/things', { body: { name: 'x' } }))).rejects.toBeInstanceOf(
      SurveyServiceError,
    );
    expect(requests).toHaveLength(1);
  });

  it('never retries a PATCH', async () => {
    const { client, requests } = await setup((_req, res) => sendError(res, 503, 'unavailable', 'Down'));
    await expect(client.unwrap(client.PATCH('/things', { body: { name: 'x' } }))).rejects.toBeInstanceOf(ServerError);
    expect(requests).toHaveLength(1);
  });

  it('stops after maxRetries and throws the last error', async () => {
    const { client, requests } = await setup((_req, res) => sendError(res, 503, 'unavailable', 'Down'), {
      retry: { ...fastRetry, maxRetries: 2 },
    });
    const error = await client
      .unwrap(client.GET('/things/{id}', { params: { path: { id: 'x' } } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 503, code: 'unavailable' });
    expect(requests).toHaveLength(3);
  });

  it('does not wait for a Retry-After beyond maxRetryAfterMs and exposes retryAfter', async () => {
    const { client, requests } = await setup((_req, res) =>
      sendError(res, 429, 'rate_limited', 'Daily limit spent', { 'retry-after': '3600' }),
    );
    const error = await client.unwrap(client.GET('/things', {})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBe(3600);
    expect(requests).toHaveLength(1);
  });

  it('retries after a network error', async () => {
    const { client, requests } = await setup(
      script(
        (_req, res) => res.socket?.destroy(),
        (_req, res) => sendData(res, 200, thing),
      ),
    );
    expect(await client.unwrap(client.GET('/things/{id}', { params: { path: { id: 'thg_1' } } }))).toEqual(thing);
    expect(requests).toHaveLength(2);
  });

  it('retries an attempt that exceeds timeoutMs', async () => {
    const { client, requests } = await setup(
      script(
        (_req, res) => setTimeout(() => sendData(res, 200, { id: 'late', name: 'late' }), 400),
        (_req, res) => sendData(res, 200, thing),
      ),
      { timeoutMs: 100 },
    );
    expect(await client.unwrap(client.GET('/things/{id}', { params: { path: { id: 'thg_1' } } }))).toEqual(thing);
    expect(requests).toHaveLength(2);
  });

  it('tells retry.onRetry about each retry: attempt, delay and the error or answer that caused it', async () => {
    const events: RetryEvent[] = [];
    const { client, requests } = await setup(
      script(
        (_req, res) => sendError(res, 503, 'unavailable', 'Database unavailable', { 'retry-after': '0' }),
        (_req, res) => res.socket?.destroy(),
        (_req, res) => sendData(res, 200, thing),
      ),
      { retry: { ...fastRetry, onRetry: (event) => events.push(event) } },
    );
    expect(await client.unwrap(client.GET('/things/{id}', { params: { path: { id: 'thg_1' } } }))).toEqual(thing);
    expect(requests).toHaveLength(3);
    expect(events.map((e) => e.attempt)).toEqual([1, 2]);
    expect(events[0]).toMatchObject({ delayMs: 0, method: 'GET', response: { status: 503 } });
    expect(events[0]!.url).toMatch(/\/things\/thg_1$/);
    expect(events[0]!.error).toBeInstanceOf(ServerError);
    expect(events[0]!.error).toMatchObject({ code: 'unavailable', message: 'Database unavailable' });
    // A network error: no answer, the fetch's own error, a backoff delay.
    expect(events[1]!.response).toBeUndefined();
    expect(events[1]!.error).toBeInstanceOf(Error);
    expect(events[1]!.delayMs).toBeGreaterThan(0);
    expect(events[1]!.delayMs).toBeLessThanOrEqual(fastRetry.maxDelayMs);
  });

  it('ends the call with what retry.onRetry throws', async () => {
    const { client, requests } = await setup(
      (_req, res) => sendError(res, 429, 'rate_limited', 'Slow down', { 'retry-after': '30' }),
      {
        retry: {
          onRetry: ({ delayMs, error }) => {
            if (delayMs > 5_000) throw error;
          },
        },
      },
    );
    const started = Date.now();
    const error = await client.surveys.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfter: 30, code: 'rate_limited' });
    expect(requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('gives the TimeoutError of a call the error it was retrying as its cause', async () => {
    const { client, requests } = await setup((_req, res) =>
      sendError(res, 503, 'unavailable', 'Database unavailable', { 'retry-after': '5' }),
    );
    const error = await client.surveys.list(undefined, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).cause).toBeInstanceOf(ServerError);
    expect((error as TimeoutError).cause).toMatchObject({ status: 503, code: 'unavailable' });
    expect(requests).toHaveLength(1);
  });

  it('gives the TimeoutError of a call that got no answer the timeout as its cause', async () => {
    const { client } = await setup((_req, res) => setTimeout(() => sendData(res, 200, []), 1_000), {
      retry: { maxRetries: 0 },
    });
    const error = await client.surveys.list(undefined, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).cause).toMatchObject({ name: 'TimeoutError' });
    expect((error as TimeoutError).cause).not.toBeInstanceOf(TimeoutError);
  });

  it('sends the bearer key and a User-Agent', async () => {
    const { client, requests } = await setup((_req, res) => sendData(res, 200, thing), { userAgent: 'acme-hr/2.1' });
    await client.GET('/things/{id}', { params: { path: { id: 'thg_1' } } });
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(requests[0]!.headers['user-agent']).toMatch(/^acme-hr\/2\.1 survey-service-sdk\/\d+\.\d+\.\d+/);
  });
});

describe('createClient', () => {
  it.each(['https://api.example.com/api/v1', 'https://api.example.com/api/v1/', 'http://127.0.0.1:3000/API/V1//'])(
    'refuses a baseUrl ending in /api/v1 (%s) and names the one to use',
    (baseUrl) => {
      expect(() => createClient({ apiKey, baseUrl })).toThrow(TypeError);
      expect(() => createClient({ apiKey, baseUrl })).toThrow(
        /baseUrl must not include \/api\/v1.*use '(https?:\/\/[^']+)'/,
      );
      expect(() => createClient({ apiKey, baseUrl })).toThrow(baseUrl.replace(/\/api\/v1\/*$/i, ''));
    },
  );

  it('accepts a baseUrl with another path or a trailing slash', () => {
    expect(() => createClient({ apiKey, baseUrl: 'https://example.com/survey/' })).not.toThrow();
    expect(() => createClient({ apiKey, baseUrl: 'https://example.com/api/v10' })).not.toThrow();
  });
});

describe('typed errors', () => {
  const envelope = (status: number, code: string) => ({
    error: { code, message: 'm', status },
    meta: { requestId: 'req_1' },
  });
  it.each([
    [400, 'validation_failed', ValidationError],
    [401, 'unauthenticated', AuthenticationError],
    [403, 'insufficient_scope', PermissionError],
    [404, 'not_found', NotFoundError],
    [409, 'invalid_state', ConflictError],
    [429, 'rate_limited', RateLimitError],
    [500, 'internal_error', ServerError],
    [501, 'not_implemented', ServerError],
    [503, 'unavailable', ServerError],
  ])('%i %s → %o', (status, code, ErrorClass) => {
    const error = errorFromResponse(new Response(null, { status }), envelope(status, code));
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toMatchObject({ status, code, requestId: 'req_1', name: ErrorClass.name });
  });

  it('builds a typed error from a body that is not the envelope', () => {
    const error = errorFromResponse(
      new Response(null, { status: 502, headers: { 'x-request-id': 'req_2' } }),
      '<html>',
    );
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 502, code: 'http_502', requestId: 'req_2' });
  });

  it('throws NotFoundError from unwrap', async () => {
    const { client } = await setup((_req, res) => sendError(res, 404, 'not_found', 'No such thing'));
    await expect(
      client.unwrap(client.GET('/things/{id}', { params: { path: { id: 'nope' } } })),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('pagination', () => {
  const all = Array.from({ length: 5 }, (_, i) => ({ id: `thg_${i + 1}`, name: `T${i + 1}` }));
  const lister: Handler = (req, res) => {
    const url = new URL(req.url, 'http://x');
    const page = Number(url.searchParams.get('page') ?? 1);
    const pageSize = Number(url.searchParams.get('pageSize') ?? 20);
    const items = all.slice((page - 1) * pageSize, page * pageSize);
    const totalPages = Math.ceil(all.length / pageSize);
    sendData(res, 200, items, {
      pagination: { page, pageSize, totalItems: all.length, totalPages, hasMore: page < totalPages },
    });
  };

  it('iterates every item across pages, keeping the filters', async () => {
    const { client, requests } = await setup(lister);
    const seen: string[] = [];
    for await (const item of client.paginate('/things', { params: { query: { pageSize: 2, q: 'x' } } }))
      seen.push(item.id);
    expect(seen).toEqual(all.map((t) => t.id));
    expect(requests.map((r) => new URL(r.url, 'http://x').searchParams.toString())).toEqual([
      'pageSize=2&q=x',
      'pageSize=2&q=x&page=2',
      'pageSize=2&q=x&page=3',
    ]);
  });

  it('follows the cursors of a list paged by cursor, keeping the filters', async () => {
    const { client, requests } = await setup((req, res) => {
      const url = new URL(req.url, 'http://x');
      const from = Number(url.searchParams.get('cursor')?.slice(1) ?? 0);
      const items = all.slice(from, from + 2);
      const hasMore = from + 2 < all.length;
      sendData(res, 200, items, {
        pagination: { limit: 2, hasMore, nextCursor: hasMore ? `c${from + 2}` : null, previousCursor: null },
      });
    });
    const seen: string[] = [];
    for await (const item of client.paginate('/things', { params: { query: { q: 'x' } } })) seen.push(item.id);
    expect(seen).toEqual(all.map((t) => t.id));
    expect(requests.map((r) => new URL(r.url, 'http://x').searchParams.toString())).toEqual([
      'q=x',
      'q=x&cursor=c2',
      'q=x&cursor=c4',
    ]);
  });

  it('works as a function and starts at the given page', async () => {
    const { client } = await setup(lister);
    const seen: string[] = [];
    for await (const item of paginate(client, '/things', { params: { query: { page: 2, pageSize: 2 } } }))
      seen.push(item.name);
    expect(seen).toEqual(['T3', 'T4', 'T5']);
  });

  it('throws the typed error of a failing page', async () => {
    const { client } = await setup((_req, res) => sendError(res, 400, 'validation_failed', 'pageSize too large'));
    const iterate = async () => {
      for await (const _ of client.paginate('/things', { params: { query: { pageSize: 500 } } })) void _;
    };
    await expect(iterate()).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('job polling', () => {
  it('polls a sync job until it completes', async () => {
    const statuses = ['pending', 'processing', 'processing', 'completed'];
    const server = await startFakeServer(
      script(
        ...statuses.map(
          (status): Handler =>
            (req, res) =>
              sendData(res, 200, {
                jobId: req.url.split('/').pop(),
                status,
                progress: status === 'completed' ? 100 : 50,
              }),
        ),
      ),
    );
    close = server.close;
    const client = createClient({ apiKey, baseUrl: server.baseUrl });
    const job = await waitForSyncJob(client, 'job_01JD3M8Q4W6T9ZK2F7X1B5N0C8', { initialDelayMs: 10, maxDelayMs: 20 });
    expect(job).toMatchObject({ jobId: 'job_01JD3M8Q4W6T9ZK2F7X1B5N0C8', status: 'completed', progress: 100 });
    expect(server.requests).toHaveLength(4);
    expect(server.requests[0]!.url).toBe('/api/v1/respondents/sync/job_01JD3M8Q4W6T9ZK2F7X1B5N0C8');
  });

  it('returns a failed job instead of throwing', async () => {
    const server = await startFakeServer((_req, res) => sendData(res, 200, { jobId: 'job_x', status: 'failed' }));
    close = server.close;
    const client = createClient({ apiKey, baseUrl: server.baseUrl });
    expect(await waitForSyncJob(client, 'job_x', { initialDelayMs: 10 })).toMatchObject({ status: 'failed' });
  });

  it('throws TimeoutError when the job does not finish in time', async () => {
    const server = await startFakeServer((_req, res) => sendData(res, 200, { jobId: 'job_x', status: 'processing' }));
    close = server.close;
    const client = createClient({ apiKey, baseUrl: server.baseUrl });
    await expect(
      waitForSyncJob(client, 'job_x', { timeoutMs: 150, initialDelayMs: 20, maxDelayMs: 40 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(server.requests.length).toBeGreaterThan(2);
  });

  it('waitFor backs off between polls', async () => {
    const at: number[] = [];
    let n = 0;
    const value = await waitFor(
      async () => {
        at.push(Date.now());
        return ++n;
      },
      (v) => v === 4,
      { initialDelayMs: 40, maxDelayMs: 1000 },
    );
    expect(value).toBe(4);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[2]).toBeGreaterThan(gaps[0]!);
  });

  it('waitFor stops on abort', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(
      waitFor(
        async () => 0,
        () => false,
        { initialDelayMs: 1000, signal: controller.signal },
      ),
    ).rejects.toThrow('stop');
  });
});
