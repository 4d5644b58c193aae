/**
 * Crash safety: the worker runs in a child process and is killed with SIGKILL in the middle of an export; a new
 * worker starts the file over and the export ends with one complete, correct file (no half file is ever
 * downloadable, no chunk of the dead attempt is part of it, the event is recorded once). The in-process service
 * only serves the API (`role: 'api'`), so it never takes the job itself.
 */
import { waitForExport } from '@survey-service/sdk';
import { beforeAll, expect, it } from 'vitest';
import { citusMode } from '../citus/cluster.js';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { apiWithWorkerProcesses } from '../helpers/worker-processes.js';
import { activeSurvey, bulkInsert, parseCsv, tenant } from './fixtures.js';

const crash = apiWithWorkerProcesses();
let t: TestService;
beforeAll(() => {
  t = crash.service();
});

// A file of about 21 MiB (21 chunks), so the worker can be killed mid-file even when this process is slowed; wide
// rows keep the per-row costs of the set-up and of the check low. The Citus cluster's distributed planner makes
// every step slower: more time.
const ROWS = 60_000;
const TEXT = 300;
const timeout = citusMode ? 360_000 : 180_000;

it('an export survives SIGKILL of its worker and produces one complete file', { timeout }, async () => {
  const owner = await tenant(t);
  const survey = await activeSurvey(owner.live);
  await bulkInsert(t, owner.organizationId, survey.id, ROWS, { textLength: TEXT });

  const first = await crash.startWorker();
  const started = await owner.live.unwrap(
    owner.live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: survey.id } },
      body: { format: 'csv' },
    }),
  );
  const read = () =>
    owner.live.unwrap(owner.live.GET('/api/v1/exports/{exportId}', { params: { path: { exportId: started.id } } }));

  const chunksStored = async () =>
    (await t.db.selectFrom('export_chunks').select(['attempt']).where('export_id', '=', started.id).execute()).length;

  // Wait for the first stored chunk of this attempt, then freeze the worker (SIGSTOP) before killing it: on a loaded
  // machine a poll can come too late to catch a moving export mid-file, a frozen one cannot finish in between.
  await eventually(async () => (await chunksStored()) > 0, 60_000, 'a chunk of the export stored', 10);
  first.child.kill('SIGSTOP');
  const frozen = await read();
  expect(frozen.status, 'export ended before it could be interrupted').toBe('processing');
  await first.kill('SIGKILL');

  // Killed mid-file: chunks of the dead attempt exist, but nothing is downloadable.
  const interrupted = await read();
  expect(interrupted.status).toBe('processing');
  expect(interrupted.downloadUrl).toBeNull();
  expect(await chunksStored()).toBeGreaterThan(0);
  const early = await owner.live.GET('/api/v1/exports/{exportId}/download', {
    params: { path: { exportId: started.id } },
    parseAs: 'stream',
  });
  expect(early.response.status).toBe(409);

  await crash.startWorker();
  const done = await waitForExport(owner.live, started.id, {
    timeoutMs: 120_000,
    initialDelayMs: 100,
    maxDelayMs: 500,
  });
  expect(done).toMatchObject({ status: 'completed', rowCount: ROWS, progress: 100 });
  expect(done.watermark).toBe(interrupted.watermark);

  const row = await t.db
    .selectFrom('exports')
    .select(['attempts', 'file_attempt'])
    .where('id', '=', started.id)
    .executeTakeFirstOrThrow();
  expect(row.attempts).toBe(2);
  expect(row.file_attempt).toBe(2);
  const attempts = await t.db
    .selectFrom('export_chunks')
    .select('attempt')
    .distinct()
    .where('export_id', '=', started.id)
    .execute();
  expect(attempts).toEqual([{ attempt: 2 }]);

  const response = await fetch(`${t.url}${done.downloadUrl}`, {
    headers: { Authorization: `Bearer ${owner.liveKey}` },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(bytes.length).toBe(done.size);
  const rows = await parseCsv(bytes.toString('utf8'));
  expect(rows).toHaveLength(ROWS + 1);
  const ids = rows.slice(1).map((r) => r[0]);
  expect(new Set(ids).size).toBe(ROWS);
  expect(ids[0]).toBe(`rsp_9${'1'.padStart(25, '0')}`);
  expect(ids.at(-1)).toBe(`rsp_9${String(ROWS).padStart(25, '0')}`);
  expect(rows.slice(1).every((r, i) => r[9] === `${'x'.repeat(TEXT)}${i + 1}`)).toBe(true);

  const events = await t.db
    .selectFrom('events')
    .select('id')
    .where('organization_id', '=', owner.organizationId)
    .where('type', '=', 'responses.export.completed')
    .execute();
  expect(events).toHaveLength(1);
});
