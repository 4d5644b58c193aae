/**
 * A survey's response count stays exact when a fold of the count deltas commits while a change of the survey waits
 * for its row: the change's answer must not count the folded deltas twice (once folded into the row it updated,
 * once still in its statement's snapshot). The test holds a fold open, sends the change, and lets the fold commit
 * once the change waits for it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { foldResponseCounts } from '../../server/src/modules/surveys/repository.js';
import { citusMode } from '../citus/cluster.js';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

it.skipIf(citusMode)('answers a transition with the exact count while a fold commits under it', async () => {
  const { live, organizationId } = await tenantWithRaisedLimits(t);
  const survey = await live.unwrap(
    live.POST('/api/v1/surveys', { body: { title: 'Counted', questions: [{ type: 'nps', text: 'Recommend us?' }] } }),
  );
  await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  for (let i = 0; i < 5; i++)
    await live.unwrap(
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: survey.id } },
        body: { answers: [{ questionId: 'q_1', value: i }] },
      }),
    );
  const tenant = { organizationId, environment: 'LIVE' as const };
  await t.db.connection().execute(async (fold) => {
    await sql`begin`.execute(fold);
    try {
      // The fold has moved the 5 deltas into the row, uncommitted: the pause below waits for the row.
      expect(await foldResponseCounts(fold, { tenant, surveyId: survey.id })).toBe(5);
      const foldPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(fold)).rows[0]!.pid;
      const paused = live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id: survey.id } } });
      await eventually(
        async () =>
          (
            await sql<{
              pid: number;
            }>`select pid from pg_stat_activity where ${foldPid} = any(pg_blocking_pids(pid))`.execute(t.db)
          ).rows.length > 0,
        30_000,
        'the pause waiting for the fold',
      );
      await sql`commit`.execute(fold);
      const answer = await paused;
      expect(answer.response.status).toBe(200);
      expect(answer.data?.data.responseCount).toBe(5);
    } catch (error) {
      await sql`rollback`.execute(fold).catch(() => undefined);
      throw error;
    }
  });
  expect((await live.surveys.get(survey.id)).responseCount).toBe(5);
});
