/**
 * `responses.export`: writes, resumes or checks one export file (see modules/exports/runner.ts). The job data
 * names the export and its tenant; everything else is in the `exports` row.
 */
import { checkLater, runExport } from '../modules/exports/index.js';
import { EXPORT_QUEUE, type ExportJobData } from '../modules/exports/index.js';
import type { JobDefinition } from './registry.js';

export const responsesExport: JobDefinition<ExportJobData> = {
  queue: EXPORT_QUEUE,
  // Crash recovery comes from the dead-man's switch within seconds; retries and expiration are the fallback and
  // harmless duplicates thanks to the export's ownership lock.
  options: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 3600 },
  concurrency: 2,
  async work(job, deps) {
    const outcome = await runExport(deps, job.data);
    if (outcome === 'busy') await checkLater(deps, job.data);
    return { outcome };
  },
};
