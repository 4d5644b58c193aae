/**
 * Every 10 minutes: deletes expired export files (7 days after completion), old export records and deletion entries.
 */
import { deleteChunksOfFailed, deleteExpired } from '../modules/exports/index.js';
import type { JobDefinition } from './registry.js';

export const exportsCleanup: JobDefinition = {
  queue: 'exports.cleanup',
  options: { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 },
  cron: '*/10 * * * *',
  async work(_job, deps) {
    const removed = await deleteExpired(deps.db);
    await deleteChunksOfFailed(deps.db);
    return removed;
  },
};
