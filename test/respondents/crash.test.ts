/**
 * Crash safety: the worker runs in a child process and is killed with SIGKILL in the middle of a sync; a new
 * worker resumes the job, which ends with exactly the right rows and stats (nothing lost, nothing counted twice).
 * The in-process service only serves the API (`role: 'api'`), so it never takes the job itself.
 */
import { waitForSyncJob } from '@survey-service/sdk';
import { beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { apiWithWorkerProcesses } from '../helpers/worker-processes.js';
import { countRespondents, people } from './fixtures.js';
import type { WorkerProcess } from './worker-process.js';

// Each test starts its own workers (stopped after it): the one it kills must be the only one that can take the job.
const crash = apiWithWorkerProcesses();
const startWorker = crash.startWorker;
let t: TestService;
beforeAll(() => {
  t = crash.service();
});

// Five batches of the sync (SYNC_BATCH_SIZE), so that the worker is killed between its first and its last.
const RECORDS = 25_000;
const invalid = RECORDS / 1000;

// Freezes the worker (SIGSTOP) as soon as the job is seen midway, so that a slow poll on a loaded machine cannot let
// it finish before the SIGKILL. A poll every 50 ms stays under the key's 300 requests a minute for 15 s (a loaded
// Citus run took longer than 5 s for its first batch), and sees the job between its first and last of five batches.
async function freezeMidway(
  worker: WorkerProcess,
  read: () => Promise<{ status: string; progress: number }>,
): Promise<number> {
  const progress = await eventually(
    async () => {
      const job = await read();
      if (job.status !== 'processing' && job.status !== 'pending')
        throw new Error(`job ended before it could be interrupted: ${job.status}`);
      return job.progress > 0 && job.progress < 100 && job.progress;
    },
    60_000,
    'the job to make progress',
    50,
  );
  worker.child.kill('SIGSTOP');
  return progress;
}

for (const mode of ['upsert', 'replace'] as const) {
  it(
    `a ${mode} sync survives SIGKILL of its worker and completes exactly once in effect`,
    { timeout: 180_000 },
    async () => {
      const { liveKey, organizationId } = await t.createTenant();
      const client = t.client(liveKey);
      // Rows that a replace must delete, and rows an upsert must leave alone.
      await t.db
        .insertInto('respondents')
        .values(
          ['old-1', 'old-2'].map((id) => ({
            organization_id: organizationId,
            environment: 'LIVE',
            external_id: id,
            email: `${id}@example.com`,
            attributes: '{}',
            content_hash: 'x',
            hire_date: null,
            first_name: null,
            last_name: null,
            department: null,
            location: null,
            job_title: null,
            manager_id: null,
            employment_type: null,
            updated_at: new Date(),
          })),
        )
        .execute();
      // Every 1,000th record is invalid, and E-5 appears again at the end (the last occurrence wins).
      const records: unknown[] = people(RECORDS).map((r, i) => (i % 1000 === 999 ? { ...r, email: 'broken' } : r));
      records.push({ externalId: 'E-5', email: 'late@example.com' });

      const worker = await startWorker();
      const accepted = await client.unwrap(
        client.POST('/api/v1/respondents/sync', { body: { mode, respondents: records as never } }),
      );
      const read = () =>
        client.unwrap(client.GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId: accepted.jobId } } }));
      const progressAtKill = await freezeMidway(worker, read);
      await worker.kill('SIGKILL');
      const interrupted = await read();
      expect(interrupted.status).toBe('processing');
      expect(progressAtKill).toBeGreaterThan(0);

      await startWorker();
      const job = await waitForSyncJob(client, accepted.jobId, {
        initialDelayMs: 200,
        maxDelayMs: 1000,
        timeoutMs: 120_000,
      });
      expect(job.status).toBe('completed');
      expect(job.progress).toBe(100);
      expect(job.stats).toEqual({
        totalRecords: RECORDS + 1,
        created: RECORDS - invalid,
        updated: 0,
        skipped: 1,
        errors: invalid,
        deleted: mode === 'replace' ? 2 : 0,
      });
      expect(job.errors).toHaveLength(invalid);
      expect(new Set(job.errors.map((e) => e.index)).size).toBe(invalid);
      expect(await countRespondents(t, organizationId)).toBe(RECORDS - invalid + (mode === 'replace' ? 0 : 2));
      const late = await client.unwrap(
        client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-5' } } }),
      );
      expect(late.email).toBe('late@example.com');
      const row = await t.db
        .selectFrom('sync_jobs')
        .select(['attempts'])
        .where('id', '=', accepted.jobId)
        .executeTakeFirstOrThrow();
      // Taken up twice: interrupted once, resumed once.
      expect(row.attempts).toBe(2);
    },
  );
}
