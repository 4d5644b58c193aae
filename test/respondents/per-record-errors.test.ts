/**
 * A sync refuses only its envelope; every problem of one record — schema-level ones included — is that record's
 * error, found by the validator `PUT /respondents/{externalId}` uses, with the path and code PUT answers for the
 * record alone. Real HTTP through the SDK; bodies are written as JSON text where JSON.stringify could not say
 * them (`1e400`, a `__proto__` member, 10,000 levels of nesting).
 */
import { waitForSyncJob } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { countRespondents, people } from './fixtures.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

type Client = ReturnType<TestService['client']>;
type Detail = { path?: string; code: string; message: string };
type Problem = { path: string | undefined; code: string };

const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const nestedArrays = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
const at = (path: string | undefined, code: string): Problem => ({ path, code });

/**
 * Odd records as JSON text without their externalId (added per request), with every problem PUT lists for the
 * record alone, in its order. A record's depth counts from the record, as PUT's from its body: 32 levels.
 */
const odd: Array<{ name: string; json: string; problems: Problem[] }> = [
  {
    name: 'attributes nested past the limit',
    json: `"email":"deep@example.com","attributes":{"x":${nestedObjects(40)}}`,
    problems: [at(`/attributes/x${'/a'.repeat(30)}`, 'too_deep')],
  },
  {
    name: 'attributes nested 10,000 levels',
    json: `"email":"deeper@example.com","attributes":{"x":${nestedObjects(10_000)}}`,
    problems: [at(`/attributes/x${'/a'.repeat(30)}`, 'too_deep')],
  },
  {
    name: 'an unknown field of nested arrays',
    json: `"email":"arrays@example.com","extra":${nestedArrays(5_000)}`,
    problems: [at(`/extra${'/0'.repeat(31)}`, 'too_deep')],
  },
  {
    name: 'an impossible date',
    json: '"email":"date@example.com","hireDate":"2024-02-30"',
    problems: [at('/hireDate', 'format')],
  },
  {
    name: 'an attribute of 1e400',
    json: '"email":"inf@example.com","attributes":{"x":1e400}',
    problems: [at('/attributes/x', 'out_of_range')],
  },
  {
    name: 'a field of -1e400',
    json: '"email":"ninf@example.com","firstName":-1e400',
    problems: [at('/firstName', 'out_of_range')],
  },
  {
    name: 'a __proto__ member',
    json: '"email":"proto@example.com","__proto__":{"email":"x"}',
    problems: [at('/__proto__', 'unknown_field')],
  },
  {
    name: 'a number for a string',
    json: '"email":"type@example.com","firstName":42',
    problems: [at('/firstName', 'type')],
  },
  { name: 'an array for the e-mail', json: '"email":["a@example.com"]', problems: [at('/email', 'type')] },
  {
    name: 'an employment type out of the list',
    json: '"email":"enum@example.com","employmentType":"boss"',
    problems: [at('/employmentType', 'any_of')],
  },
  {
    name: 'an unknown field',
    json: '"email":"extra@example.com","shoeSize":44',
    problems: [at('/shoeSize', 'unknown_field')],
  },
  {
    name: 'a nested attribute value',
    json: '"email":"obj@example.com","attributes":{"x":{"y":1}}',
    problems: [at('/attributes/x', 'any_of')],
  },
  {
    name: 'an attribute text too long',
    json: `"email":"long@example.com","attributes":{"note":"${'n'.repeat(1001)}"}`,
    problems: [at('/attributes/note', 'max_length'), at('/attributes/note', 'any_of')],
  },
  // A person may have no address (`email` absent or null), but an address that is sent must be one.
  { name: 'empty e-mail', json: '"email":"","firstName":"Nobody"', problems: [at('/email', 'format')] },
  {
    name: 'two bad fields',
    json: '"email":"two","hireDate":"2024-13-01"',
    problems: [at('/email', 'format'), at('/hireDate', 'format')],
  },
  {
    name: 'a NUL character',
    json: '"email":"nul@example.com","firstName":"a\\u0000b"',
    problems: [at('/firstName', 'invalid_character')],
  },
  {
    name: 'a lone surrogate',
    json: '"email":"sur@example.com","lastName":"\\udc00"',
    problems: [at('/lastName', 'invalid_character')],
  },
  {
    name: 'a NUL in an attribute value',
    json: '"email":"nulattr@example.com","attributes":{"note":"x\\u0000"}',
    problems: [at('/attributes/note', 'invalid_character')],
  },
  {
    name: 'an attribute name out of its pattern',
    json: '"email":"name@example.com","attributes":{"bad name":1}',
    problems: [at('/attributes', 'pattern')],
  },
  {
    name: 'a NUL in an attribute name',
    json: '"email":"nulname@example.com","attributes":{"a\\u0000":1}',
    problems: [at('/attributes', 'pattern'), at('/attributes/a\uFFFD', 'invalid_character')],
  },
];

/** A POST of exactly `text` through the SDK's client (its key and its Idempotency-Key, our serialization). */
async function syncText(client: Client, text: string, idempotencyKey?: string) {
  return client.POST('/api/v1/respondents/sync', {
    body: { mode: 'upsert', respondents: [] },
    bodySerializer: () => text,
    ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}),
  });
}

async function putText(client: Client, externalId: string, text: string) {
  return client.PUT('/api/v1/respondents/{externalId}', {
    params: { path: { externalId } },
    body: { email: 'unused@example.com' },
    bodySerializer: () => text,
  });
}

const detailsOf = (answer: { error?: unknown }) =>
  (answer.error as { error?: { details?: Detail[] } } | undefined)?.error?.details ?? [];
/** PUT's details inside the record, each place and code once (the request validator may say one twice). */
const problemsOf = (details: Detail[]): Problem[] =>
  details
    .map((detail) => ({ path: detail.path?.replace(/^\/body/, ''), code: detail.code }))
    .filter((problem, i, all) => all.findIndex((p) => p.path === problem.path && p.code === problem.code) === i);
const waitFor = (client: Client, jobId: string) =>
  waitForSyncJob(client, jobId, { initialDelayMs: 100, maxDelayMs: 500, timeoutMs: 60_000 });

describe('a sync with odd records among good ones', () => {
  it('is accepted, stores the good records and reports each odd one with the path and code PUT answers for it', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);

    // PUT: each odd record alone is a 400 listing exactly these problems.
    for (const [i, record] of odd.entries()) {
      const answer = await putText(client, `E-odd-${i}`, `{${record.json}}`);
      expect(answer.response.status, record.name).toBe(400);
      expect(problemsOf(detailsOf(answer)), record.name).toEqual(record.problems);
    }

    // The same records in one sync, between good ones.
    const good = people(4);
    const parts = [JSON.stringify(good[0]), JSON.stringify(good[1])];
    for (const [i, record] of odd.entries()) parts.push(`{"externalId":"E-odd-${i}",${record.json}}`);
    parts.push(JSON.stringify(good[2]), JSON.stringify(good[3]));
    const accepted = await syncText(client, `{"mode":"upsert","respondents":[${parts.join(',')}]}`);
    expect(accepted.response.status, JSON.stringify(accepted.error)).toBe(202);
    const job = await waitFor(client, accepted.data!.data.jobId);

    expect(job.status).toBe('completed');
    expect(job.stats).toEqual({
      totalRecords: odd.length + 4,
      created: 4,
      updated: 0,
      skipped: 0,
      errors: odd.length,
      deleted: 0,
    });
    // Each odd record's error: PUT's first detail (path inside the record, code).
    expect(job.errors.map((e) => ({ index: e.index, externalId: e.externalId, path: e.path, code: e.code }))).toEqual(
      odd.map((record, i) => ({ index: i + 2, externalId: `E-odd-${i}`, ...record.problems[0]! })),
    );
    for (const error of job.errors) expect(error.message.length, error.path).toBeGreaterThan(5);
    expect(await countRespondents(t, organizationId)).toBe(4);
    const stored = await client.unwrap(
      client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-3' } } }),
    );
    expect(stored).toMatchObject(good[3]!);

    // The completion event carries the same errors.
    const events = await client.unwrap(
      client.GET('/api/v1/events', { params: { query: { type: 'respondents.sync.completed' } } }),
    );
    const completed = events.find(
      (event) => event.type === 'respondents.sync.completed' && event.data.jobId === job.jobId,
    );
    expect(completed?.data).toMatchObject({ errors: job.errors });
  });

  it('reports elements that are not objects, and an unstorable externalId, as per-record errors', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const accepted = await syncText(
      client,
      '{"mode":"replace","respondents":[42,null,"E-1",[],true,{"externalId":"E-\\u0000","email":"z@example.com"},{"externalId":"E-ok","email":"ok@example.com"}]}',
    );
    expect(accepted.response.status, JSON.stringify(accepted.error)).toBe(202);
    const job = await waitFor(client, accepted.data!.data.jobId);
    expect(job.status).toBe('completed');
    expect(job.stats).toMatchObject({ totalRecords: 7, created: 1, errors: 6 });
    expect(job.errors.map((e) => ({ index: e.index, externalId: e.externalId, path: e.path, code: e.code }))).toEqual([
      ...[0, 1, 2, 3, 4].map((index) => ({ index, externalId: null, path: undefined, code: 'type' })),
      { index: 5, externalId: null, path: '/externalId', code: 'invalid_character' },
    ]);
  });

  it('keeps the index of a record it cannot store beyond the first batch, and a later duplicate still wins, in a replace', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    const records = people(6000).map((record) => JSON.stringify(record));
    records[5003] = `{"externalId":"E-5003","email":"x@example.com","attributes":{"x":${nestedObjects(100)}}}`;
    records[10] = '{"externalId":"E-5500","email":"early@example.com","attributes":{"x":1e400}}'; // superseded by index 5500
    records[5999] = `{"externalId":"E-5999","email":"y@example.com","attributes":{"x":-1e400}}`;
    const accepted = await syncText(client, `{"mode":"replace","respondents":[${records.join(',')}]}`);
    expect(accepted.response.status, JSON.stringify(accepted.error)).toBe(202);
    const job = await waitFor(client, accepted.data!.data.jobId);
    expect(job.status).toBe('completed');
    expect(job.stats).toEqual({ totalRecords: 6000, created: 5997, updated: 0, skipped: 1, errors: 2, deleted: 0 });
    expect(job.errors.map((e) => ({ index: e.index, externalId: e.externalId, path: e.path, code: e.code }))).toEqual([
      { index: 5003, externalId: 'E-5003', path: `/attributes/x${'/a'.repeat(30)}`, code: 'too_deep' },
      { index: 5999, externalId: 'E-5999', path: '/attributes/x', code: 'out_of_range' },
    ]);
    expect(await countRespondents(t, organizationId)).toBe(5997);
    const winner = await client.unwrap(
      client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-5500' } } }),
    );
    expect(winner.email).toBe('person5500@example.com');
  });

  it('keeps a __proto__ attribute as data, the same through PUT and sync', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const put = await putText(
      client,
      'E-proto-put',
      '{"email":"p@example.com","attributes":{"__proto__":"x","level":2}}',
    );
    expect(put.response.status).toBe(201);
    const accepted = await syncText(
      client,
      '{"mode":"upsert","respondents":[{"externalId":"E-proto-sync","email":"p@example.com","attributes":{"__proto__":"x","level":2}}]}',
    );
    expect(accepted.response.status).toBe(202);
    const job = await waitFor(client, accepted.data!.data.jobId);
    expect(job.stats).toMatchObject({ created: 1, errors: 0 });
    for (const externalId of ['E-proto-put', 'E-proto-sync']) {
      const stored = await client.unwrap(
        client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId } } }),
      );
      expect(Object.keys(stored.attributes!).sort()).toEqual(['__proto__', 'level']);
      expect(Object.getOwnPropertyDescriptor(stored.attributes, '__proto__')?.value).toBe('x');
    }
  });

  it('tells apart two requests that differ only inside a record it cannot store (same Idempotency-Key: 409)', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const key = crypto.randomUUID();
    const body = (value: string) =>
      `{"mode":"upsert","respondents":[{"externalId":"E-1","email":"a@example.com","attributes":{"x":${value}}}]}`;
    const first = await syncText(client, body('1e400'), key);
    expect(first.response.status).toBe(202);
    const replay = await syncText(client, body('1e400'), key);
    expect(replay.response.status).toBe(202);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    const other = await syncText(client, body('-1e400'), key);
    expect(other.response.status).toBe(409);
    await waitFor(client, first.data!.data.jobId);
  });
});

describe('the envelope', () => {
  it('is still refused with 400, naming the envelope', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const good = JSON.stringify(people(1)[0]);
    const cases: Array<[string, Problem]> = [
      [`{"mode":"merge","respondents":[${good}]}`, at('/body/mode', 'enum')],
      [`{"respondents":[${good}]}`, at('/body/mode', 'required')],
      ['{"mode":"upsert","respondents":{"externalId":"E-1"}}', at('/body/respondents', 'type')],
      ['{"mode":"upsert","respondents":[]}', at('/body/respondents', 'min_items')],
      [`{"mode":"upsert","respondents":[${good}],"extra":1}`, at('/body/extra', 'unknown_field')],
      [`{"mode":"upsert","dryRun":"yes","respondents":[${good}]}`, at('/body/dryRun', 'type')],
      [
        `{"mode":"upsert","respondents":[${good}],"note":${nestedObjects(40)}}`,
        at(`/body/note${'/a'.repeat(31)}`, 'too_deep'),
      ],
      [
        `{"mode":"upsert","respondents":[${Array.from({ length: 100_001 }, () => '{}').join(',')}]}`,
        at('/body/respondents', 'max_items'),
      ],
    ];
    for (const [text, problem] of cases) {
      const answer = await syncText(client, text);
      expect(answer.response.status, text.slice(0, 80)).toBe(400);
      expect(
        detailsOf(answer).map((d) => ({ path: d.path, code: d.code })),
        text.slice(0, 80),
      ).toContainEqual(problem);
    }
  });
});
