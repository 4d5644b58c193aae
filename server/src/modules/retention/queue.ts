/** The `retention.run` queue: what the daily job (jobs.ts) and a run's checks (runner.ts) send. */
import type { Tenant } from '../../db/tenant.js';
import { defineQueue } from '../../jobs/define.js';

export interface RetentionJobData {
  runId: string;
  organizationId: string;
  environment: Tenant['environment'];
}

export const retentionQueue = defineQueue<RetentionJobData>('retention.run', {
  // Crash recovery comes from the dead-man's switch within seconds; retries and expiry are the fallback, and a
  // duplicate is harmless (the ownership lock, and each batch checking the run is still its own).
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 3600,
});
