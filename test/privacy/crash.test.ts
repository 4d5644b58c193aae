/**
 * Crash safety: the worker runs in a child process and is killed with SIGKILL in the middle of an erasure — after
 * it deleted the person's responses and scrubbed their copies, before it deleted their record (the test holds that
 * row's lock, so the run waits there, mid-way). Nothing of the run stays (its transaction dies with its session),
 * and a new worker carries the request out once: the response deleted once, counted once, one event, the same
 * inventory as a dry run. The in-process service only serves the API (`role: 'api'`), so it never takes the job.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { citusMode } from '../citus/cluster.js';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { apiWithWorkerProcesses } from '../helpers/worker-processes.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { ada, answersOf, everyone, questions, waitForRequest } from './fixtures.js';

const crash = apiWithWorkerProcesses();
const startWorker = crash.startWorker;
let t: TestService;
beforeAll(() => {
  t = crash.service();
});

it(
  'an erasure survives SIGKILL of its worker mid-run and takes effect once',
  { timeout: citusMode ? 240_000 : 120_000 },
  async () => {
    const { live, organizationId } = await tenantWithRaisedLimits(t);
    for (const p of everyone) {
      const { externalId, ...fields } = p;
      await live.unwrap(
        live.PUT('/api/v1/respondents/{externalId}', { params: { path: { externalId } }, body: fields }),
      );
    }
    const survey = await live.unwrap(live.POST('/api/v1/surveys', { body: { title: 'Pulse', questions } }));
    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
    const responseIds = new Map<string, string>();
    for (const [i, p] of everyone.entries()) {
      const r = await live.unwrap(
        live.POST('/api/v1/surveys/{id}/responses', {
          params: { path: { id: survey.id } },
          body: { respondentExternalId: p.externalId, answers: answersOf(p, i) },
        }),
      );
      responseIds.set(p.externalId, r.id);
    }
    const adaResponse = responseIds.get(ada.externalId)!;

    const first = await startWorker();
    const dry = await waitForRequest(
      live,
      (
        await live.privacy.requests.create({
          type: 'erasure',
          subject: { externalId: ada.externalId },
          scope: 'identity_and_responses',
          dryRun: true,
        })
      ).id,
    );

    // Hold Ada's record: the run does everything else, then waits for this lock to delete it.
    const holder = new pg.Client({ connectionString: t.database.url });
    await holder.connect();
    // Sessions are watched from outside the holder's transaction, which would see one snapshot of them throughout.
    const observer = new pg.Client({ connectionString: t.database.url });
    await observer.connect();
    try {
      await holder.query('begin');
      await holder.query(
        `select 1 from respondents where organization_id = $1 and environment = 'LIVE' and external_id = $2 for update`,
        [organizationId, ada.externalId],
      );
      const accepted = await live.privacy.requests.create({
        type: 'erasure',
        subject: { externalId: ada.externalId },
        scope: 'identity_and_responses',
      });
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      // The session that waits for the holder's lock: on Citus the wait happens on the worker holding the shard, and
      // citus_lock_waits names both sides by their global pid (node × 10^10 + the coordinator session's pid).
      const blocked = citusMode
        ? `select (waiting_gpid % 10000000000)::int as pid from citus_lock_waits
           where blocking_gpid % 10000000000 = $1`
        : `select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))`;
      const waiting = await eventually(
        async () => (await observer.query<{ pid: number }>(blocked, [holderPid])).rows[0]?.pid,
        60_000,
        'the run waiting on the record',
        25,
      );
      // Mid-run: the response is already deleted inside the run's transaction, which no one else sees.
      expect((await live.privacy.requests.get(accepted.id)).status).toBe('processing');
      await first.kill('SIGKILL');
      await holder.query('commit');
      // The killed worker's session finds its client gone as soon as it can go on, and rolls everything back.
      await eventually(
        async () =>
          (await observer.query('select 1 from pg_stat_activity where pid = $1', [waiting])).rows.length === 0,
        60_000,
        'the killed run to end',
        25,
      );

      const stillThere = await live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
        params: { path: { id: survey.id, responseId: adaResponse } },
      });
      expect(stillThere.response.status).toBe(200);
      expect((await live.privacy.requests.get(accepted.id)).status).toBe('processing');

      await startWorker();
      const done = await waitForRequest(live, accepted.id);
      expect(done.status).toBe('completed');
      expect(done.inventory).toEqual(dry.inventory);

      const row = await t.db
        .selectFrom('privacy_requests')
        .select(['attempts', 'subject_value'])
        .where('id', '=', accepted.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ attempts: 2, subject_value: null });
      const gone = await live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
        params: { path: { id: survey.id, responseId: adaResponse } },
      });
      expect(gone.response.status).toBe(404);
      expect(
        (await live.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: ada.externalId } } }))
          .response.status,
      ).toBe(404);
      // Deleted once, counted once.
      expect((await live.surveys.get(survey.id)).responseCount).toBe(everyone.length - 1);
      const deletions = await t.db
        .selectFrom('response_deletions')
        .select('response_id')
        .where('organization_id', '=', organizationId)
        .execute();
      expect(deletions).toEqual([{ response_id: adaResponse }]);
      const copies = await t.db
        .selectFrom('analytics_responses')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow();
      expect(Number(copies.n)).toBe(everyone.length - 1);
      const completedEvents = await t.db
        .selectFrom('events')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('type', '=', 'privacy_request.completed')
        .where(sql<string>`data ->> 'id'`, '=', accepted.id)
        .execute();
      expect(completedEvents).toHaveLength(1);
    } finally {
      await holder.end();
      await observer.end();
    }
  },
);
