/**
 * The `distributions.send` queue: what accepting a distribution (service.ts) and the sender's checks, holds and
 * reminders (sender.ts) send. Its worker is in jobs.ts, apart, because the worker runs the sender, which uses the
 * service.
 */
import type { Tenant } from '../../db/tenant.js';
import { defineQueue } from '../../jobs/define.js';

/** The distribution and what to make progress on: everything else is in its rows. */
export interface DistributionJobData {
  organizationId: string;
  environment: Tenant['environment'];
  distributionId: string;
  /** `send`: match, freeze the audience and send (or hold, or cancel); `remind`: the reminder. */
  kind: 'send' | 'remind';
}

export const distributionQueue = defineQueue<DistributionJobData>('distributions.send', {
  // A large send runs for a long time (MAIL_RATE_PER_SECOND); a crashed one resumes through the checks, not
  // through expiration. Retries cover an unreachable mail server.
  retryLimit: 6,
  retryDelay: 30,
  retryBackoff: true,
  expireInSeconds: 4 * 3600,
});
