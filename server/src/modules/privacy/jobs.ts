/**
 * The privacy module's jobs: `privacy.request` carries out, resumes or checks one request (see runner.ts), and
 * `privacy.cleanup` deletes access files past their 7 days and requests past their 3 years.
 */
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { privacyQueue } from './queue.js';
import { deleteExpired } from './repository.js';
import { checkLater, runPrivacyRequest } from './runner.js';

export const privacyRequest = defineJob(privacyQueue, {
  concurrency: 2,
  async work(job, deps) {
    const outcome = await runPrivacyRequest(deps, job.data);
    if (outcome === 'busy') await checkLater(deps, job.data);
    return { outcome };
  },
});

/** Every 10 minutes, like the exports' clean-up: an access file is personal data and goes when its 7 days end. */
export const privacyCleanup = defineJob(
  defineQueue('privacy.cleanup', { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 }),
  {
    cron: '*/10 * * * *',
    work: (_job, deps) => deleteExpired(deps.db),
  },
);

export const privacyJobs: readonly Job[] = [privacyRequest, privacyCleanup];
