/**
 * The retention module's jobs: `retention.daily` starts today's run in every environment with a policy, and
 * `retention.run` carries one out (runner.ts).
 */
import type { Dependencies } from '../../dependencies.js';
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { newId } from '../../lib/ids.js';
import { retentionQueue } from './queue.js';
import { deleteOldRuns, insertRun, tenantsWithPolicies } from './repository.js';
import { checkLater, runRetention } from './runner.js';

/**
 * Starts today's (UTC) run in each environment with a policy: the run's row and its queue entry in one
 * transaction, at most one run a day per environment, so a repeated or retried daily job starts nothing twice and a
 * crash between two environments loses neither. Returns how many runs it started.
 */
export async function startRetentionRuns(deps: Pick<Dependencies, 'db' | 'boss'>, now = new Date()): Promise<number> {
  const day = now.toISOString().slice(0, 10);
  let started = 0;
  for (const t of await tenantsWithPolicies(deps.db)) {
    const tenant = { organizationId: t.organization_id, environment: t.environment };
    await deps.db.transaction().execute(async (tx) => {
      const run = await insertRun(tx, tenant, newId('ret'), day);
      if (!run) return;
      await retentionQueue.send(deps.boss, tx, { runId: run.id, ...tenant });
      started++;
    });
  }
  return started;
}

export const retentionJobs: readonly Job[] = [
  defineJob(defineQueue('retention.daily', { retryLimit: 3, retryDelay: 300, expireInSeconds: 1800 }), {
    cron: '40 2 * * *',
    async work(_job, deps) {
      return { started: await startRetentionRuns(deps), forgottenRuns: await deleteOldRuns(deps.db) };
    },
  }),
  defineJob(retentionQueue, {
    concurrency: 2,
    async work(job, deps) {
      const outcome = await runRetention(deps, job.data);
      if (outcome === 'busy') await checkLater(deps, job.data);
      return { outcome };
    },
  }),
];
