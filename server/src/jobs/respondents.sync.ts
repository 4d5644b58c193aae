/**
 * `respondents.sync`: runs, resumes or checks one respondent sync job (see modules/respondents/sync-runner.ts).
 * The job data is only the sync job's id: the records are stored in `sync_job_batches`, never in the queue.
 */
import { checkLater, runSyncJob } from '../modules/respondents/index.js';
import { SYNC_QUEUE, type SyncJobData } from '../modules/respondents/index.js';
import type { JobDefinition } from './registry.js';

export const respondentsSync: JobDefinition<SyncJobData> = {
  queue: SYNC_QUEUE,
  // Crash recovery does not wait for expiration (the worker's dead-man's switch resumes a job within seconds);
  // expiration and retries cover the rest, and are harmless duplicates thanks to the job's ownership lock.
  options: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 900 },
  async work(job, deps) {
    const outcome = await runSyncJob(deps, job.data.syncJobId);
    if (outcome === 'busy') await checkLater(deps, job.data.syncJobId);
    return { outcome };
  },
};
