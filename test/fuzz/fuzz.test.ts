/**
 * A spec-driven fuzz suite. For every operation of the bundled document, seeded requests
 * (valid ones and mutations, see requests.ts) go over real HTTP to the real service on a real PostgreSQL, with
 * response validation on. Every answer must be: not a 5xx (501 only where the operation documents it), a
 * status the operation documents, and a body valid against that status's schema (Ajv over the document).
 *
 * `npm test` runs FUZZ_RUNS=2000 (default) with a fixed seed; `npm run fuzz` runs longer campaigns:
 * `FUZZ_RUNS=50000 FUZZ_SEED=123 npm run fuzz`. A failure report names the seed and the exact requests.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDocumented, raw } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes } from '../helpers/surveys.js';
import { operations, requestFor, type Fixtures, type FuzzRequest, type Keys } from './requests.js';

const runs = Number(process.env.FUZZ_RUNS ?? 2000);
const seed = Number(process.env.FUZZ_SEED ?? 20261124);
const concurrency = 8;

let t: TestService;
let keys: Keys;
const fixtures: Fixtures = {};

async function json(
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; data?: Record<string, unknown> }> {
  const answer = await raw(t.url, method, path, {
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: answer.status, data: (answer.body as { data?: Record<string, unknown> } | undefined)?.data };
}

beforeAll(async () => {
  // Distribution e-mails (if the fuzz sends any) go to a throw-away outbox, never to a network.
  t = await startTestService({
    authFailuresPerMinute: 1_000_000,
    mailOutboxDir: mkdtempSync(path.join(tmpdir(), 'fuzz-outbox-')),
  });
  const org = await t.createOrganization('BUSINESS');
  await t.db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: 10_000_000, rate_limit_per_day: 100_000_000 })
    .where('id', '=', org)
    .execute();
  const full = await t.createKey(org);
  const narrow = await t.createKey(org, { scopes: ['surveys:read'] });
  const test = await t.createKey(org, { environment: 'TEST' });
  const revoked = await t.createKey(org);
  const spare = await t.createKey(org);
  await t.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', revoked.id).execute();
  keys = { full: full.key, narrow: narrow.key, test: test.key, revoked: revoked.key };

  const surveys: string[] = [];
  for (let i = 0; i < 6; i++) {
    const created = await json('POST', '/api/v1/surveys', full.key, { title: `Fuzz ${i}`, questions: allTypes });
    surveys.push(String(created.data!.id));
    if (i % 2 === 0) await json('POST', `/api/v1/surveys/${created.data!.id}/launch`, full.key, {});
  }
  const response = await json('POST', `/api/v1/surveys/${surveys[0]}/responses`, full.key, {
    answers: [
      { questionId: 'q_1', value: 7 },
      { questionId: 'q_2', value: 3 },
    ],
  });
  await json('PUT', '/api/v1/respondents/E-fuzz-1', full.key, { email: 'fuzz@example.com', department: 'R&D' });
  const sync = await json('POST', '/api/v1/respondents/sync', full.key, {
    mode: 'upsert',
    respondents: [{ externalId: 'E-fuzz-2', email: 'f2@example.com' }],
  });
  const webhook = await json('POST', '/api/v1/webhooks', full.key, {
    url: 'http://127.0.0.1:9/hook',
    events: ['survey.launched'],
  });
  const ids = (...values: unknown[]) => values.filter((v): v is string => typeof v === 'string');
  Object.assign(fixtures, {
    id: [...surveys, spare.id, ...ids(webhook.data?.id)],
    surveyId: surveys,
    responseId: ids(response.data?.id),
    externalId: ['E-fuzz-1', 'E-fuzz-2'],
    jobId: ids(sync.data?.jobId),
  });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

async function send(request: FuzzRequest) {
  const target = request.query ? `${request.path}?${request.query}` : request.path;
  return raw(t.url, request.method, target, { headers: request.headers, body: request.body });
}

describe('fuzz: every operation of the contract', () => {
  it(`answers ${runs} seeded requests (seed ${seed}) without a 5xx, with documented statuses and valid bodies`, async () => {
    const ops = operations();
    const perOperation = Math.ceil(runs / ops.length);
    const requests: FuzzRequest[] = [];
    ops.forEach((op, index) =>
      requests.push(...fc.sample(requestFor(op, fixtures, keys), { seed: seed + index, numRuns: perOperation })),
    );
    const failures: string[] = [];
    const statuses = new Map<string, Set<number>>();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests.length) {
          const request = requests[next++]!;
          const answer = await send(request);
          if (!statuses.has(request.operationId)) statuses.set(request.operationId, new Set());
          statuses.get(request.operationId)!.add(answer.status);
          try {
            expectDocumented(request.template, request.method, answer, request.mutation);
          } catch (error) {
            failures.push(
              `${(error as Error).message.split('\n')[0]}\n  request: ${request.method} ${request.path}${request.query ? `?${request.query}` : ''} headers=${JSON.stringify({ ...request.headers, authorization: request.headers.authorization ? '<key>' : undefined })} body=${JSON.stringify(request.body?.slice(0, 300))}\n  answer: ${answer.text.slice(0, 300)}`,
            );
          }
        }
      }),
    );
    if (process.env.FUZZ_VERBOSE)
      for (const [id, set] of statuses) console.log(id.padEnd(28), [...set].sort().join(' '));
    expect(requests.length).toBeGreaterThanOrEqual(runs);
    // Every operation was exercised, and beyond its refusals: the fuzz reaches handlers.
    expect(statuses.size).toBe(ops.length);
    const reached = [...statuses.values()].filter((set) =>
      [...set].some((status) => status < 400 || status === 404 || status === 409),
    ).length;
    expect(reached).toBeGreaterThan(ops.length / 2);
    expect(failures.slice(0, 10), `seed ${seed}: ${failures.length} failing requests`).toEqual([]);
  }, 300_000);
});
