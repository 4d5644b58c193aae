/**
 * pg-boss in the service's own PostgreSQL (schema `pgboss`): jobs survive restarts and crashes of workers, and
 * any number of API and worker processes share the queues. Only worker processes supervise (maintenance) and
 * run cron schedules.
 */
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from '../logger.js';
import type { Dependencies } from '../http/handler.js';
import { wakeChannel } from './enqueue.js';
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
  await createQueues(boss, connectionString);
  return boss;
}

/** Any fixed number: the advisory lock that serialises queue creation across processes. */
const queueCreationLock = 7_304_221;

/**
 * Creates missing queues one process at a time: pg-boss's create_queue (a partition per queue) deadlocks when
 * several processes start together (API_PROCESSES, several workers) and create the same queues at once.
 */
async function createQueues(boss: PgBoss, connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'survey-service-queues' });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [queueCreationLock]);
    for (const job of jobs) {
      if (!(await boss.getQueue(job.queue))) await boss.createQueue(job.queue, { name: job.queue, ...job.options });
    }
  } finally {
    await client.end(); // ends the session, which releases the lock
  }
}

/**
 * Starts the workers of every queue, listening for wake-ups (jobs/enqueue.ts) so that a new job starts at once
 * rather than at the next poll; returns a function that stops taking new jobs.
 */
export async function startWorkers(
  boss: PgBoss,
  deps: Dependencies,
  connectionString: string,
): Promise<() => Promise<void>> {
  const workerIds = new Map<string, string[]>();
  for (const job of jobs) {
    const concurrency = job.concurrency ?? 1;
    for (let i = 0; i < concurrency; i++) {
      const workerId = await boss.work<object>(
        job.queue,
        { batchSize: 1, pollingIntervalSeconds: 0.5 },
        async ([item]) => {
          if (!item) return;
          const log = deps.log.child({ queue: job.queue, jobId: item.id });
          log.debug('job started');
          try {
            return await job.work(item, deps);
          } catch (error) {
            log.error({ err: error }, 'job failed');
            throw error;
          }
        },
      );
      workerIds.set(job.queue, [...(workerIds.get(job.queue) ?? []), workerId]);
    }
    if (job.cron) await boss.schedule(job.queue, job.cron);
  }
  const stopListening = await listenForWakeUps(connectionString, deps.log, (queue) => {
    for (const id of workerIds.get(queue) ?? []) boss.notifyWorker(id);
  });
  return async () => {
    await stopListening();
    for (const job of jobs) await boss.offWork(job.queue);
  };
}

/** A dedicated connection LISTENing on the wake channel. If it fails, the workers still poll. */
async function listenForWakeUps(
  connectionString: string,
  log: Logger,
  wake: (queue: string) => void,
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString, application_name: 'survey-service-worker-wake' });
  client.on('error', (error) => log.warn({ err: error }, 'wake-up listener lost; workers keep polling'));
  client.on('notification', (message) => {
    if (message.channel === wakeChannel && message.payload) wake(message.payload);
  });
  try {
    await client.connect();
    await client.query(`listen ${wakeChannel}`);
  } catch (error) {
    log.warn({ err: error }, 'could not listen for wake-ups; workers keep polling');
  }
  return () => client.end().catch(() => {});
}
