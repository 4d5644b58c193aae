/**
 * Every 10 minutes: folds the append-only deltas of the exact daily and per-segment analytics counts into one
 * row per key, so analytics keep reading a few hundred rows however many responses arrive one by one. Safe to run
 * twice or to be killed: one statement, sums unchanged.
 */
import { compactDailyCounts, compactSegmentCounts } from '../modules/analytics/index.js';
import type { JobDefinition } from './registry.js';

export const analyticsCompact: JobDefinition = {
  queue: 'analytics.compact',
  options: { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 },
  cron: '*/10 * * * *',
  async work(_job, deps) {
    return {
      foldedRows: await compactDailyCounts(deps.db),
      foldedSegmentRows: await compactSegmentCounts(deps.db),
    };
  },
};
