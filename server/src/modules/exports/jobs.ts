/**
 * The exports module's jobs: `responses.export` writes, resumes or checks one export file (see runner.ts), and
 * `exports.cleanup` deletes what has expired.
 */
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { exportQueue } from './queue.js';
import { deleteChunksOfFailed, deleteExpired } from './repository.js';
import { checkLater, runExport } from './runner.js';

export const responsesExport = defineJob(exportQueue, {
  concurrency: 2,
  async work(job, deps) {
    const outcome = await runExport(deps, job.data);
    if (outcome === 'busy') await checkLater(deps, job.data);
    return { outcome };
  },
});

/**
 * Every 10 minutes: deletes expired export files (7 days after completion), old export records and deletion entries.
 */
export const exportsCleanup = defineJob(
  defineQueue('exports.cleanup', { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 }),
  {
    cron: '*/10 * * * *',
    async work(_job, deps) {
      const removed = await deleteExpired(deps.db);
      await deleteChunksOfFailed(deps.db);
      return removed;
    },
  },
);

export const exportsJobs: readonly Job[] = [responsesExport, exportsCleanup];
