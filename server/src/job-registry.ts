/**
 * Every background job of the service: its pg-boss queue (named `domain.action`), the queue's retry policy,
 * and its worker. Queues are created at start-up by every process (API processes send, worker processes work).
 * Each feature module defines its jobs next to its code (`modules/<name>/jobs.ts`, see define.ts) and shows them
 * in its index; the request path's job is in http/jobs.ts. A new module's jobs are added here. Part of the composition
 * root: start.ts hands the list to pg-boss (jobs/boss.ts), which knows no job by name.
 */
import { httpJobs } from './http/jobs.js';
import { aiJobs } from './modules/ai/index.js';
import { analyticsJobs } from './modules/analytics/index.js';
import { distributionsJobs } from './modules/distributions/index.js';
import { eventsJobs } from './modules/events/index.js';
import { exportsJobs } from './modules/exports/index.js';
import { privacyJobs } from './modules/privacy/index.js';
import { auditJobs } from './modules/audit/index.js';
import { retentionJobs } from './modules/retention/index.js';
import { respondentsJobs } from './modules/respondents/index.js';
import { surveysJobs } from './modules/surveys/index.js';
import type { Job } from './jobs/define.js';

export const jobs: readonly Job[] = [
  ...httpJobs,
  ...respondentsJobs,
  ...exportsJobs,
  ...eventsJobs,
  ...analyticsJobs,
  ...surveysJobs,
  ...distributionsJobs,
  ...aiJobs,
  ...privacyJobs,
  ...auditJobs,
  ...retentionJobs,
];
