/**
 * The `responses.export` queue: what accepting an export (service.ts) and the runner's checks (runner.ts) send.
 * Its worker is in jobs.ts, apart, because the worker runs the runner, which uses the service.
 */
import type { Tenant } from '../../db/tenant.js';
import { defineQueue } from '../../jobs/define.js';

/** The export and its tenant: everything else is in the `exports` row. */
export interface ExportJobData {
  exportId: string;
  organizationId: string;
  environment: Tenant['environment'];
}

export const exportQueue = defineQueue<ExportJobData>('responses.export', {
  // Crash recovery comes from the dead-man's switch within seconds; retries and expiration are the fallback and
  // harmless duplicates thanks to the export's ownership lock.
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 3600,
});
