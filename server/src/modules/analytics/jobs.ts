/**
 * The analytics module's job. Every 10 minutes: folds the append-only deltas of the exact daily and per-segment
 * analytics counts (both in `analytics_segment_cells`) into one row per key, so analytics keep reading a few
 * hundred rows however many responses arrive one by one. Safe to run twice or to be killed: one statement, sums
 * unchanged.
 */
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { compactSegmentCounts } from './repository.js';

export const analyticsJobs: readonly Job[] = [
  defineJob(defineQueue('analytics.compact', { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 }), {
    cron: '*/10 * * * *',
    async work(_job, deps) {
      return { foldedRows: await compactSegmentCounts(deps.db) };
    },
  }),
];
