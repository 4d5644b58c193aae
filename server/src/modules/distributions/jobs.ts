/**
 * The distributions module's job: `distributions.send` makes progress on one distribution — its send (match,
 * freeze the audience, mail) or its reminder (see sender.ts).
 */
import { defineJob, type Job } from '../../jobs/define.js';
import { distributionQueue } from './queue.js';
import { checkLater, runDistributionJob } from './sender.js';

export const distributionsJobs: readonly Job[] = [
  defineJob(distributionQueue, {
    concurrency: 2,
    async work(job, deps) {
      const outcome = await runDistributionJob(deps, job.data);
      if (outcome === 'busy') await checkLater(deps, job.data);
      return { outcome };
    },
  }),
];
