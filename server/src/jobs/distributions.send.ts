/**
 * `distributions.send`: makes progress on one distribution — its send (match, snapshot, mail) or its
 * reminder (see modules/distributions/sender.ts). The job data names the distribution; everything else is in
 * its rows.
 */
import { enqueueCheck, runDistributionJob } from '../modules/distributions/index.js';
import { DISTRIBUTION_QUEUE, type DistributionJobData } from '../modules/distributions/index.js';
import type { JobDefinition } from './registry.js';

export const distributionsSend: JobDefinition<DistributionJobData> = {
  queue: DISTRIBUTION_QUEUE,
  // A large send runs for a long time (MAIL_RATE_PER_SECOND); a crashed one resumes through the checks, not
  // through expiration. Retries cover an unreachable mail server.
  options: { retryLimit: 6, retryDelay: 30, retryBackoff: true, expireInSeconds: 4 * 3600 },
  concurrency: 2,
  async work(job, deps) {
    const outcome = await runDistributionJob(deps, job.data);
    if (outcome === 'busy') await enqueueCheck(deps, job.data);
    return { outcome };
  },
};
