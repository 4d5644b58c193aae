/**
 * The AI module's job: `ai.analyse` runs, resumes or checks one AI analysis (see runner.ts).
 */
import { defineJob, type Job } from '../../jobs/define.js';
import { analysisQueue } from './queue.js';
import { checkLater, runAnalysis } from './runner.js';

export const aiJobs: readonly Job[] = [
  defineJob(analysisQueue, {
    concurrency: 2,
    async work(job, deps) {
      const outcome = await runAnalysis(deps, job.data);
      if (outcome === 'busy') await checkLater(deps, job.data);
      return { outcome };
    },
  }),
];
