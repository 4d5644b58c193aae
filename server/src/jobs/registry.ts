/**
 * Every background job of the service: its pg-boss queue (named `domain.action`), the queue's retry policy,
 * and its worker. Queues are created at start-up by every process (API processes send, worker processes work).
 * Feature modules add their jobs here.
 */
import type PgBoss from 'pg-boss';
import type { Dependencies } from '../http/handler.js';
import { eventsCleanup } from './events.cleanup.js';
import { maintenanceCleanup } from './maintenance.cleanup.js';
import { distributionsSend } from './distributions.send.js';
import { respondentsSync } from './respondents.sync.js';
import { responsesExport } from './responses.export.js';
import { exportsCleanup } from './exports.cleanup.js';
import { analyticsCompact } from './analytics.compact.js';
import { aiAnalyse } from './ai.analyse.js';
import { surveysFoldCounts } from './surveys.fold-counts.js';

export interface JobDefinition<Data extends object = object> {
  queue: string;
  options: Omit<PgBoss.Queue, 'name'>;
  /** How many jobs of this queue one worker process runs at once. */
  concurrency?: number;
  /** A cron schedule, for periodic jobs. */
  cron?: string;
  work(job: PgBoss.Job<Data>, deps: Dependencies): Promise<unknown>;
}

export const jobs: JobDefinition[] = [
  maintenanceCleanup as JobDefinition,
  respondentsSync as JobDefinition,
  responsesExport as JobDefinition,
  exportsCleanup as JobDefinition,
  eventsCleanup,
  analyticsCompact,
  surveysFoldCounts,
  distributionsSend as JobDefinition,
  aiAnalyse as JobDefinition,
];
