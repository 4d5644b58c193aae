/**
 * The respondents module's job: `respondents.sync` runs, resumes or checks one sync job (see sync-runner.ts).
 */
import { defineJob, type Job } from '../../jobs/define.js';
import { syncQueue } from './sync-queue.js';
import { checkLater, runSyncJob } from './sync-runner.js';

export const respondentsJobs: readonly Job[] = [
  defineJob(syncQueue, {
    async work(job, deps) {
      const outcome = await runSyncJob(deps, job.data);
      if (outcome === 'busy') await checkLater(deps, job.data);
      return { outcome };
    },
  }),
];
