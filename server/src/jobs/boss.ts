/**
 * pg-boss in the service's own PostgreSQL (schema `pgboss`): jobs survive restarts and crashes of workers, and
 * any number of API and worker processes share the queues. Only worker processes supervise (maintenance) and
 * run cron schedules.
 */
import PgBoss from 'pg-boss';
import type { Logger } from '../logger.js';
import type { Services } from '../http/handler.js';
import { jobs } from './registry.js';

export async function startBoss(connectionString: string, options: { worker: boolean; log: Logger }): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString,
    schema: 'pgboss',
    max: 4,
    application_name: options.worker ? 'survey-service-worker' : 'survey-service-api',
    supervise: options.worker,
    schedule: options.worker,
    migrate: true,
  });
  boss.on('error', (error) => options.log.error({ err: error }, 'pg-boss error'));
  await boss.start();
  for (const job of jobs) await boss.createQueue(job.queue, { name: job.queue, ...job.options });
  return boss;
}

/** Starts the workers of every queue; returns a function that stops taking new jobs. */
export async function startWorkers(boss: PgBoss, services: Services): Promise<() => Promise<void>> {
  for (const job of jobs) {
    const concurrency = job.concurrency ?? 1;
    for (let i = 0; i < concurrency; i++) {
      await boss.work(job.queue, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([item]) => {
        if (!item) return;
        const log = services.log.child({ queue: job.queue, jobId: item.id });
        log.debug('job started');
        try {
          return await job.work(item as PgBoss.Job<object>, services);
        } catch (error) {
          log.error({ err: error }, 'job failed');
          throw error;
        }
      });
    }
    if (job.cron) await boss.schedule(job.queue, job.cron);
  }
  return async () => {
    for (const job of jobs) await boss.offWork(job.queue);
  };
}
