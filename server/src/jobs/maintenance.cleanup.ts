/** Hourly: forgets idempotency answers and rate-limit windows that have expired. */
import { deleteExpiredIdempotencyKeys } from '../http/idempotency.js';
import type { JobDefinition } from './registry.js';

export const maintenanceCleanup: JobDefinition = {
  queue: 'maintenance.cleanup',
  options: { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 },
  cron: '17 * * * *',
  async work(_job, deps) {
    const idempotencyKeys = await deleteExpiredIdempotencyKeys(deps.db);
    const rateLimits = await deps.db.deleteFrom('rate_limits').where('expire', '<', Date.now()).executeTakeFirst();
    return { idempotencyKeys, rateLimits: Number(rateLimits.numDeletedRows) };
  },
};
