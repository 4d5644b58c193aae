/**
 * The `respondents.sync` queue: what accepting and promoting a sync (sync-service.ts) and the runner's checks
 * (sync-runner.ts) send. Its worker is in jobs.ts, apart, because the worker runs the runner, which uses the
 * service.
 */
import type { Environment } from '../../db/columns.js';
import { defineQueue } from '../../jobs/define.js';

/**
 * The sync job's id and tenant: the records are stored in `sync_job_batches`, never in the queue. The tenant
 * routes every query of the worker to the tenant's rows (one shard on Citus); entries queued before it was
 * carried hold the id only, and the runner finds their tenant from the job.
 */
export interface SyncJobData {
  syncJobId: string;
  organizationId?: string;
  environment?: Environment;
}

export const syncQueue = defineQueue<SyncJobData>('respondents.sync', {
  // Crash recovery does not wait for expiration (the worker's dead-man's switch resumes a job within seconds);
  // expiration and retries cover the rest, and are harmless duplicates thanks to the job's ownership lock.
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 900,
});
