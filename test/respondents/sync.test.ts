/** Respondent sync through the SDK, worker in-process: every mode, dry runs, per-record errors, duplicates,
 * idempotency.
 * */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSyncJob } from '../../server/src/modules/respondents/sync-runner.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { countRespondents, people, sync } from './fixtures.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.close();
});

const addsUp = (s: { created: number; updated: number; skipped: number; errors: number; totalRecords: number }) =>
  s.created + s.updated + s.skipped + s.errors === s.totalRecords;

describe('upsert', () => {
  it('creates, then re-running the same sync changes nothing and says so, then updates only what changed', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    const records = people(12_000);
    const first = await sync(client, 'upsert', records);
    expect(first.accepted).toMatchObject({ status: 'processing', totalRecords: 12_000, dryRun: false });
    expect(Date.parse(first.accepted.estimatedCompletionTime)).toBeGreaterThan(Date.now() - 60_000);
    expect(first.job).toMatchObject({
      status: 'completed',
      progress: 100,
      mode: 'upsert',
      failureReason: null,
      errors: [],
    });
    expect(first.job.stats).toEqual({
      totalRecords: 12_000,
      created: 12_000,
      updated: 0,
      skipped: 0,
      errors: 0,
      deleted: 0,
    });
    expect(first.job.startedAt).not.toBeNull();
    expect(first.job.completedAt).not.toBeNull();
    expect(await countRespondents(t, organizationId)).toBe(12_000);

    const stored = await client.unwrap(
      client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-7' } } }),
    );
    expect(stored).toMatchObject({ ...records[7], createdAt: expect.any(String) });

    const again = await sync(client, 'upsert', records);
    expect(again.job.stats).toEqual({
      totalRecords: 12_000,
      created: 0,
      updated: 0,
      skipped: 12_000,
      errors: 0,
      deleted: 0,
    });
    const unchanged = await client.unwrap(
      client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-7' } } }),
    );
    expect(unchanged.updatedAt).toBe(stored.updatedAt);

    const changed = records.slice(0, 3).map((r) => ({ ...r, jobTitle: 'Manager' }));
    const third = await sync(client, 'upsert', [...changed, ...people(2, { prefix: 'new-' })]);
    expect(third.job.stats).toEqual({ totalRecords: 5, created: 2, updated: 3, skipped: 0, errors: 0, deleted: 0 });
    expect(await countRespondents(t, organizationId)).toBe(12_002);
  });

  it('rejects bad records one by one (index, externalId, path, message) and applies the others', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    const good = people(3);
    const bad = [
      { externalId: 'E-bad-email', email: 'nope' },
      { email: 'no-id@example.com' },
      { externalId: 'E-extra', email: 'x@example.com', shoeSize: 44 },
      { externalId: 'E-date', email: 'd@example.com', hireDate: '2021-02-30x' },
      { externalId: 'E-type', email: 't@example.com', employmentType: 'boss' },
      { externalId: 'E-attr', email: 'a@example.com', attributes: { nested: { x: 1 } } },
      // Valid for the schema, but not storable in PostgreSQL.
      { externalId: 'E-nul', email: 'n@example.com', firstName: 'A\u0000B' },
      { externalId: 'E-year0', email: 'y@example.com', hireDate: '0000-01-01' },
    ];
    const { job } = await sync(client, 'upsert', [good[0], ...bad, good[1], good[2]]);
    expect(job.status).toBe('completed');
    expect(job.stats).toEqual({ totalRecords: 11, created: 3, updated: 0, skipped: 0, errors: 8, deleted: 0 });
    expect(job.errors.map((e) => [e.index, e.externalId, e.path])).toEqual([
      [1, 'E-bad-email', '/email'],
      [2, null, '/externalId'],
      [3, 'E-extra', '/shoeSize'],
      [4, 'E-date', '/hireDate'],
      [5, 'E-type', '/employmentType'],
      [6, 'E-attr', expect.stringMatching(/^\/attributes/)],
      [7, 'E-nul', '/firstName'],
      [8, 'E-year0', '/hireDate'],
    ]);
    for (const error of job.errors) expect(error.message.length).toBeGreaterThan(3);
    expect(await countRespondents(t, organizationId)).toBe(3);
  });

  it('reports the first 100 errors and counts them all', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const records = Array.from({ length: 7000 }, (_, i) =>
      i % 2 ? { externalId: `E-${i}`, email: `bad${i}` } : { externalId: `E-${i}`, email: `ok${i}@example.com` },
    );
    const { job } = await sync(client, 'upsert', records);
    expect(job.stats).toEqual({ totalRecords: 7000, created: 3500, updated: 0, skipped: 0, errors: 3500, deleted: 0 });
    expect(job.errors).toHaveLength(100);
    expect(job.errors[0]).toMatchObject({ index: 1, externalId: 'E-1' });
    expect(job.errors[99]).toMatchObject({ index: 199, externalId: 'E-199' });
  });

  it('lets the last occurrence of a repeated externalId win; earlier ones count as skipped', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const records = [
      { externalId: 'E-1', email: 'first@example.com' },
      { externalId: 'E-2', email: 'two@example.com' },
      { externalId: 'E-1', email: 'second@example.com' },
      { externalId: 'E-1', email: 'third@example.com', department: 'Ops' },
    ];
    const { job } = await sync(client, 'upsert', records);
    expect(job.stats).toEqual({ totalRecords: 4, created: 2, updated: 0, skipped: 2, errors: 0, deleted: 0 });
    const one = await client.unwrap(
      client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-1' } } }),
    );
    expect(one).toMatchObject({ email: 'third@example.com', department: 'Ops' });
  });
});

describe('append', () => {
  it('inserts new records and leaves existing ones untouched', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await sync(client, 'upsert', people(5));
    const { job } = await sync(client, 'append', [
      ...people(5).map((r) => ({ ...r, department: 'Changed' })),
      ...people(3, { prefix: 'n' }),
    ]);
    expect(job.stats).toEqual({ totalRecords: 8, created: 3, updated: 0, skipped: 5, errors: 0, deleted: 0 });
    const untouched = await client.unwrap(
      client.GET('/api/v1/respondents', { params: { query: { department: 'Changed' } } }),
    );
    expect(untouched).toHaveLength(0);
    expect(await countRespondents(t, organizationId)).toBe(8);
  });
});

describe('replace', () => {
  it('makes the stored set exactly the given set and reports deletions', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await sync(client, 'upsert', people(8));
    // keep 0–3 (1 changed), drop 4–7, add two
    const next = [
      ...people(4).map((r, i) => (i === 1 ? { ...r, location: 'Rome' } : r)),
      ...people(2, { prefix: 'n' }),
      { externalId: 'E-x', email: 'bad' },
    ];
    const { job } = await sync(client, 'replace', next);
    expect(job.status).toBe('completed');
    expect(job.stats).toEqual({ totalRecords: 7, created: 2, updated: 1, skipped: 3, errors: 1, deleted: 4 });
    const ids = (await client.unwrap(client.GET('/api/v1/respondents', { params: { query: { pageSize: 100 } } }))).map(
      (r) => r.externalId,
    );
    expect(ids).toEqual(['E-0', 'E-1', 'E-2', 'E-3', 'E-n0', 'E-n1']);
    expect(await countRespondents(t, organizationId)).toBe(6);
  });

  it('with no valid record fails and deletes nothing', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await sync(client, 'upsert', people(4));
    const { job } = await sync(client, 'replace', [{ email: 'x@example.com' }, { externalId: 'E-1', email: 'nope' }]);
    expect(job.status).toBe('failed');
    expect(job.failureReason).toMatch(/no valid record/i);
    expect(job.stats).toEqual({ totalRecords: 2, created: 0, updated: 0, skipped: 0, errors: 2, deleted: 0 });
    expect(job.completedAt).not.toBeNull();
    expect(await countRespondents(t, organizationId)).toBe(4);
  });
});

describe('dry run', () => {
  it('reports what each mode would do and changes nothing', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await sync(client, 'upsert', people(6));
    const before = await client.unwrap(client.GET('/api/v1/respondents', { params: { query: { pageSize: 100 } } }));
    const input = [
      ...people(2).map((r) => ({ ...r, jobTitle: 'CTO' })),
      people(6)[2]!,
      ...people(3, { prefix: 'n' }),
      { externalId: 'E-bad', email: 'bad' },
    ];

    const upsert = await sync(client, 'upsert', input, true);
    expect(upsert.accepted.dryRun).toBe(true);
    expect(upsert.job).toMatchObject({ status: 'completed', dryRun: true });
    expect(upsert.job.stats).toEqual({ totalRecords: 7, created: 3, updated: 2, skipped: 1, errors: 1, deleted: 0 });
    const append = await sync(client, 'append', input, true);
    expect(append.job.stats).toEqual({ totalRecords: 7, created: 3, updated: 0, skipped: 3, errors: 1, deleted: 0 });
    const replace = await sync(client, 'replace', input, true);
    expect(replace.job.stats).toEqual({ totalRecords: 7, created: 3, updated: 2, skipped: 1, errors: 1, deleted: 3 });

    expect(await client.unwrap(client.GET('/api/v1/respondents', { params: { query: { pageSize: 100 } } }))).toEqual(
      before,
    );
    expect(await countRespondents(t, organizationId)).toBe(6);
  });
});

describe('jobs', () => {
  it('never interleaves two syncs of one tenant: the second waits as pending; other tenants are not held up', async () => {
    const { liveKey, testKey } = await t.createTenant();
    const client = t.client(liveKey);
    const first = await client.unwrap(
      client.POST('/api/v1/respondents/sync', { body: { mode: 'upsert', respondents: people(20_000) as never } }),
    );
    const second = await client.unwrap(
      client.POST('/api/v1/respondents/sync', { body: { mode: 'replace', respondents: people(10) as never } }),
    );
    const otherEnvironment = await t
      .client(testKey)
      .unwrap(
        t
          .client(testKey)
          .POST('/api/v1/respondents/sync', { body: { mode: 'upsert', respondents: people(10) as never } }),
      );
    expect(first.status).toBe('processing');
    expect(second.status).toBe('pending');
    expect(otherEnvironment.status).toBe('processing');
    expect(Date.parse(second.estimatedCompletionTime)).toBeGreaterThanOrEqual(
      Date.parse(first.estimatedCompletionTime),
    );

    const waiting = await client.unwrap(
      client.GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId: second.jobId } } }),
    );
    expect(waiting).toMatchObject({ status: 'pending', startedAt: null, progress: 0 });

    const { waitForSyncJob } = await import('@survey-service/sdk');
    const options = { initialDelayMs: 100, maxDelayMs: 500, timeoutMs: 60_000 };
    const [a, b] = await Promise.all([
      waitForSyncJob(client, first.jobId, options),
      waitForSyncJob(client, second.jobId, options),
    ]);
    expect(a.status).toBe('completed');
    expect(b.status).toBe('completed');
    expect(Date.parse(b.startedAt!)).toBeGreaterThanOrEqual(Date.parse(a.completedAt!));
    expect(b.stats).toEqual({ totalRecords: 10, created: 0, updated: 0, skipped: 10, errors: 0, deleted: 19_990 });
    expect(addsUp(a.stats)).toBe(true);
  });

  it('fails a job that keeps being interrupted instead of taking it up forever, and starts the next one', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    // A job as a worker that died five times leaves it: processing, five attempts, its batch still stored.
    const jobId = 'job_01JD3MK7Y1Z5G3VQ8A2C4F6R9T';
    await t.db
      .insertInto('sync_jobs')
      .values({
        id: jobId,
        organization_id: organizationId,
        environment: 'LIVE',
        mode: 'replace',
        dry_run: false,
        status: 'processing',
        total_records: 1,
        failure_reason: null,
        attempts: 5,
      })
      .execute();
    await t.db
      .insertInto('sync_job_batches')
      .values({
        organization_id: organizationId,
        environment: 'LIVE',
        job_id: jobId,
        batch_no: 0,
        records: JSON.stringify(people(1)),
        superseded: [],
      })
      .execute();
    const queued = await client.unwrap(
      client.POST('/api/v1/respondents/sync', { body: { mode: 'upsert', respondents: people(2) as never } }),
    );
    expect(queued.status).toBe('pending');

    expect(await runSyncJob(t.service.deps, { syncJobId: jobId })).toBe('finished');
    const failed = await client.unwrap(client.GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId } } }));
    expect(failed).toMatchObject({
      status: 'failed',
      progress: 100,
      failureReason: expect.stringMatching(/interrupted attempts.*Nothing was applied/),
    });
    expect(await countRespondents(t, organizationId)).toBe(0);
    const { waitForSyncJob } = await import('@survey-service/sdk');
    const next = await waitForSyncJob(client, queued.jobId, {
      initialDelayMs: 100,
      maxDelayMs: 500,
      timeoutMs: 30_000,
    });
    expect(next.stats.created).toBe(2);
  });

  it('shows a job only to its organization and environment', async () => {
    const owner = await t.createTenant();
    const other = await t.createTenant();
    const { accepted } = await sync(t.client(owner.liveKey), 'upsert', people(1));
    for (const key of [owner.testKey, other.liveKey]) {
      const response = await t
        .client(key)
        .GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId: accepted.jobId } } });
      expect(response.response.status).toBe(404);
      expect(response.error?.error.code).toBe('not_found');
    }
    const malformed = await t
      .client(owner.liveKey)
      .GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId: 'job_nope' } } });
    expect(malformed.response.status).toBe(404);
  });

  it('checks the envelope as a whole: mode, array, size; and the scope (a record that is not an object is its own error)', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    const post = (body: unknown) => client.POST('/api/v1/respondents/sync', { body: body as never });
    for (const body of [
      { respondents: [{ externalId: 'E-1', email: 'a@example.com' }] },
      { mode: 'merge', respondents: [{ externalId: 'E-1', email: 'a@example.com' }] },
      { mode: 'upsert', respondents: { externalId: 'E-1' } },
      { mode: 'upsert', respondents: [] },
      { mode: 'upsert', respondents: Array.from({ length: 100_001 }, () => ({})) },
    ]) {
      const response = await post(body);
      expect(response.response.status).toBe(400);
      expect(response.error?.error.code).toBe('validation_failed');
    }
    const notAnObject = await sync(client, 'upsert', ['E-1', { externalId: 'E-2', email: 'b@example.com' }]);
    expect(notAnObject.job.stats).toMatchObject({ created: 1, errors: 1 });
    expect(notAnObject.job.errors).toEqual([{ index: 0, externalId: null, code: 'type', message: 'must be object' }]);
    const reader = t.client(
      (await t.createKey(organizationId, { scopes: ['respondents:read', 'respondents:write'] })).key,
    );
    const denied = await reader.POST('/api/v1/respondents/sync', {
      body: { mode: 'upsert', respondents: [{ externalId: 'E-1', email: 'a@example.com' }] },
    });
    expect(denied.response.status).toBe(403);
  });
});
