/**
 * Crash safety of a retention run: the worker runs in a child process and is killed with SIGKILL in the middle of a
 * run — after the batch of one survey's responses committed with its counts, while the next survey's batch waits for
 * a row lock the test holds. The killed batch leaves nothing (its transaction dies with its session); a new worker
 * takes the run over and finishes it: every due response deleted once, counted once, the run's report equal to the
 * preview made before it, one audit entry. The in-process service only serves the API (`role: 'api'`).
 */
import pg from 'pg';
import { beforeAll, expect, it } from 'vitest';
import { startRetentionRuns } from '../../server/src/modules/retention/index.js';
import { citusMode } from '../citus/cluster.js';
import type { TestService } from '../helpers/service.js';
import { apiWithWorkerProcesses } from '../helpers/worker-processes.js';
import { eventually } from '../helpers/eventually.js';
import { everyone } from './fixtures.js';
import { age, answeredSurvey, org } from './retention-fixtures.js';

const crash = apiWithWorkerProcesses();
const startWorker = crash.startWorker;
let t: TestService;
beforeAll(() => {
  t = crash.service();
});

it(
  'a run survives SIGKILL of its worker between two batches and removes everything once',
  { timeout: citusMode ? 240_000 : 120_000 },
  async () => {
    const o = await org(t);
    const first = await answeredSurvey(o.live, 'Earlier survey');
    const second = await answeredSurvey(o.live, 'Later survey');
    await age(t, o.organizationId, [...first.responseIds, ...second.responseIds], 400);
    await o.live.privacy.retention.update({ responses: { afterDays: 365, basis: 'submission', action: 'delete' } });
    const { wouldRemove } = await o.live.privacy.retention.preview();
    expect(wouldRemove.deletedResponses).toBe(2 * everyone.length);

    const holder = new pg.Client({ connectionString: t.database.url });
    await holder.connect();
    const observer = new pg.Client({ connectionString: t.database.url });
    await observer.connect();
    try {
      // Hold one response of the later survey (surveys are worked in id order): the run waits there, mid-way.
      await holder.query('begin');
      await holder.query(
        `select 1 from responses where organization_id = $1 and environment = 'LIVE' and id = $2 for update`,
        [o.organizationId, second.responseIds[3]],
      );
      const worker = await startWorker();
      await startRetentionRuns(t.service.deps);
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const blocked = citusMode
        ? `select (waiting_gpid % 10000000000)::int as pid from citus_lock_waits
           where blocking_gpid % 10000000000 = $1`
        : `select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))`;
      const waiting = await eventually(
        async () => (await observer.query<{ pid: number }>(blocked, [holderPid])).rows[0]?.pid,
        60_000,
        'the run waiting on the held response',
      );
      // The earlier survey's batch committed with its counts; the later one's is under way, seen by no one.
      const midway = (await o.live.privacy.retention.get()).lastRun!;
      expect(midway.status).toBe('running');
      expect(midway.removed.deletedResponses).toBe(everyone.length);
      expect((await o.live.surveys.get(first.id)).responseCount).toBe(0);

      await worker.kill('SIGKILL');
      await holder.query('commit');
      await eventually(
        async () =>
          (await observer.query('select 1 from pg_stat_activity where pid = $1', [waiting])).rows.length === 0
            ? true
            : undefined,
        60_000,
        'the killed batch to end',
      );
      expect((await o.live.surveys.get(second.id)).responseCount).toBe(everyone.length);

      await startWorker();
      const done = await eventually(
        async () => {
          const { lastRun } = await o.live.privacy.retention.get();
          return lastRun?.status === 'completed' ? lastRun : undefined;
        },
        60_000,
        'the run to be taken over and completed',
      );
      expect(done.id).toBe(midway.id);
      expect(done.removed).toEqual(wouldRemove);
      const run = await t.db
        .selectFrom('retention_runs')
        .select('attempts')
        .where('organization_id', '=', o.organizationId)
        .executeTakeFirstOrThrow();
      expect(run.attempts).toBe(2);
      for (const s of [first, second]) expect((await o.live.surveys.get(s.id)).responseCount).toBe(0);
      const deletions = await t.db
        .selectFrom('response_deletions')
        .select('response_id')
        .where('organization_id', '=', o.organizationId)
        .execute();
      expect(deletions.map((d) => d.response_id).sort()).toEqual([...first.responseIds, ...second.responseIds].sort());
      const copies = await t.db
        .selectFrom('analytics_responses')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', o.organizationId)
        .executeTakeFirstOrThrow();
      expect(Number(copies.n)).toBe(0);
      expect(await o.live.auditLog.list({ action: 'retention.run' })).toHaveLength(1);
    } finally {
      await holder.end();
      await observer.end();
    }
  },
);
