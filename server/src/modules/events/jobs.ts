/**
 * The events module's job. Hourly: deletes events older than 30 days, and with them their webhook deliveries
 * (the contract's retention).
 */
import { defineJob, defineQueue, type Job } from '../../jobs/define.js';
import { deleteExpiredEvents } from './repository.js';
import { EVENT_RETENTION_DAYS } from './service.js';

export const eventsJobs: readonly Job[] = [
  defineJob(defineQueue('events.cleanup', { retryLimit: 2, retryDelay: 60, expireInSeconds: 1800 }), {
    cron: '41 * * * *',
    async work(_job, deps) {
      return { deletedEvents: await deleteExpiredEvents(deps.db, EVENT_RETENTION_DAYS) };
    },
  }),
];
