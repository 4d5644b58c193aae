/**
 * The `ai.analyse` queue: what accepting an analysis (service.ts) and the runner's checks (runner.ts) send. Its
 * worker is in jobs.ts, apart, because the worker runs the runner, which uses the service.
 */
import type { Tenant } from '../../db/tenant.js';
import { defineQueue } from '../../jobs/define.js';

/** The analysis and its tenant only: the text is read from the responses when the job runs. */
export interface AnalysisJobData {
  analysisId: string;
  organizationId: string;
  environment: Tenant['environment'];
}

export const analysisQueue = defineQueue<AnalysisJobData>('ai.analyse', {
  // Provider retries happen inside a run; pg-boss's retries and expiry only cover crashes, and a duplicate run
  // is harmless (the advisory lock, and the conditional finish).
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 900,
});
