/**
 * The surveys module's job. Every minute: folds the appended response-count deltas into
 * `surveys.response_count`, then sweeps the rows it deleted (see sweepResponseCounts), so reading a survey's count
 * sums a handful of rows however many responses arrive. Safe to run twice or to be killed: one statement, counts
 * unchanged by it, and a sweep that removes only what no transaction can see.
 */
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { foldResponseCounts, sweepResponseCounts } from './repository.js';

export const surveysJobs: readonly Job[] = [
  defineJob(defineQueue('surveys.fold-counts', { retryLimit: 2, retryDelay: 30, expireInSeconds: 300 }), {
    cron: '* * * * *',
    async work(_job, deps) {
      const foldedDeltas = await foldResponseCounts(deps.db);
      await sweepResponseCounts(deps.db);
      return { foldedDeltas };
    },
  }),
];
