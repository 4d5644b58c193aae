/**
 * `ai.analyse`: runs, resumes or checks one AI analysis (see modules/ai/runner.ts). The job data names the
 * analysis and its tenant only; the text is read from the responses when the job runs.
 */
import { checkLater, runAnalysis } from '../modules/ai/index.js';
import { AI_QUEUE, type AnalysisJobData } from '../modules/ai/index.js';
import type { JobDefinition } from './registry.js';

export const aiAnalyse: JobDefinition<AnalysisJobData> = {
  queue: AI_QUEUE,
  // Provider retries happen inside a run; pg-boss's retries and expiry only cover crashes, and a duplicate run
  // is harmless (the advisory lock, and the conditional finish).
  options: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 900 },
  concurrency: 2,
  async work(job, deps) {
    const outcome = await runAnalysis(deps, job.data);
    if (outcome === 'busy') await checkLater(deps, job.data);
    return { outcome };
  },
};
