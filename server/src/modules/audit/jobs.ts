/** The audit module's job. Daily: deletes entries older than a year (the contract's retention). */
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { deleteExpiredEntries } from './repository.js';

export const auditJobs: readonly Job[] = [
  defineJob(defineQueue('audit.cleanup', { retryLimit: 2, retryDelay: 60, expireInSeconds: 1800 }), {
    cron: '17 3 * * *',
    async work(_job, deps) {
      return { deletedEntries: await deleteExpiredEntries(deps.db) };
    },
  }),
];
