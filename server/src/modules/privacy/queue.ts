/**
 * The `privacy.request` queue: what accepting a request (service.ts) and the runner's checks (runner.ts) send. Its
 * worker is in jobs.ts, apart, because the worker runs the runner, which uses the service.
 */
import type { Tenant } from '../../db/tenant.js';
import { defineQueue } from '../../jobs/define.js';

/** The request and its tenant only: its subject stays in the request's row (pg-boss keeps job data). */
export interface PrivacyJobData {
  requestId: string;
  organizationId: string;
  environment: Tenant['environment'];
}

export const privacyQueue = defineQueue<PrivacyJobData>('privacy.request', {
  // Crash recovery comes from the dead-man's switch within seconds; retries and expiry are the fallback, and a
  // duplicate run is harmless (the ownership lock, the row lock and the conditional completion).
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 900,
});
