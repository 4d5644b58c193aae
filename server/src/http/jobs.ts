/**
 * The request path's job. Hourly: forgets idempotency replies and rate-limit windows that have expired — the
 * bookkeeping of requests (idempotency.ts, rate-limit.ts), which belongs to no feature module.
 */
import { defineJob, defineQueue, type Job } from '../jobs/define.js';
import { deleteExpiredIdempotencyKeys } from './idempotency.js';

export const httpJobs: readonly Job[] = [
  defineJob(defineQueue('maintenance.cleanup', { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 }), {
    cron: '17 * * * *',
    async work(_job, deps) {
      const idempotencyKeys = await deleteExpiredIdempotencyKeys(deps.db);
      const rateLimits = await deps.db.deleteFrom('rate_limits').where('expire', '<', Date.now()).executeTakeFirst();
      return { idempotencyKeys, rateLimits: Number(rateLimits.numDeletedRows) };
    },
  }),
];
