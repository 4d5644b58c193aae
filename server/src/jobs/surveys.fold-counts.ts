/**
 * Every minute: folds the appended response-count deltas into `surveys.response_count`, so reading a survey's
 * count sums a handful of rows however many responses arrive. Safe to run twice or to be killed: one
 * statement, counts unchanged by it.
 */
import { foldResponseCounts } from '../modules/surveys/index.js';
import type { JobDefinition } from './registry.js';

export const surveysFoldCounts: JobDefinition = {
  queue: 'surveys.fold-counts',
  options: { retryLimit: 2, retryDelay: 30, expireInSeconds: 300 },
  cron: '* * * * *',
  async work(_job, deps) {
    return { foldedDeltas: await foldResponseCounts(deps.db) };
  },
};
