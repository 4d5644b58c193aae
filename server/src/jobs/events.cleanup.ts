/** Hourly: deletes events older than 30 days, and with them their webhook deliveries (the contract's retention). */
import { EVENT_RETENTION_DAYS } from '../modules/events/index.js';
import { deleteExpiredEvents } from '../modules/events/index.js';
import type { JobDefinition } from './registry.js';

export const eventsCleanup: JobDefinition = {
  queue: 'events.cleanup',
  options: { retryLimit: 2, retryDelay: 60, expireInSeconds: 1800 },
  cron: '41 * * * *',
  async work(_job, deps) {
    return { deletedEvents: await deleteExpiredEvents(deps.db, EVENT_RETENTION_DAYS) };
  },
};
