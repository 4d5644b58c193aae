/**
 * pg-boss in the service's own PostgreSQL (schema `pgboss`): jobs survive restarts and crashes of workers, and
 * any number of API and worker processes share the queues. Only worker processes supervise (maintenance) and
 * run cron schedules.
 */
import { sql } from 'kysely';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { DatabaseAvailability } from '../db/availability.js';
import { Listener, listenerConnection } from '../db/listener.js';
import type { Logger } from '../logger.js';
import type { Dependencies } from '../dependencies.js';
import { wakeChannel } from './enqueue.js';
import type { Job } from './define.js';

export async function startBoss(
  connectionString: string,
  jobs: readonly Job[],
  options: { worker: boolean; log: Logger; availability: DatabaseAvailability },
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString,
    schema: 'pgboss',
    max: 4,
    application_name: options.worker ? 'survey-service-worker' : 'survey-service-api',
    supervise: options.worker,
    schedule: options.worker,
    migrate: true,
  });
  // pg-boss reports each failed poll and maintenance run: the database gone is one line (availability.ts); its
  // pool, its workers and its timers carry on by themselves and resume once the database is back.
  boss.on('error', (error) => {
    if (!options.availability.failed(error, 'pg-boss')) options.log.error({ err: error }, 'pg-boss error');
  });
  await boss.start();
  await createQueues(boss, jobs, connectionString);
  return boss;
}

/** Any fixed number: the advisory lock that serialises queue creation across processes. */
const queueCreationLock = 7_304_221;

/**
 * Creates missing queues one process at a time: pg-boss's create_queue (a partition per queue) deadlocks when
 * several processes start together (API_PROCESSES, several workers) and create the same queues at once.
 */
async function createQueues(boss: PgBoss, jobs: readonly Job[], connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'survey-service-queues' });
  // Its loss fails the statement under way; without a listener it would also end the process.
  client.on('error', () => {});
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
  jobs: readonly Job[],
  deps: Dependencies,
  connectionString: string,
): Promise<() => Promise<void>> {
  const workerIds = new Map<string, string[]>();
  let stopping = false;
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
          for (;;) {
            try {
              return await job.work(item, deps);
            } catch (error) {
              if (!deps.availability.explains(error) || stopping) {
                log.error({ err: error }, 'job failed');
                throw error;
              }
            }
            // The database went away under the job. Every job resumes from its committed state (it survives a
            // SIGKILL of its worker the same way), so once the database is back it runs again here, at once,
            // rather than after pg-boss's expiry: its completion could not be recorded while it was gone anyway.
            const back = await deps.availability.untilReachable(
              () => sql`select 1`.execute(deps.db),
              deps.config.databaseReconnectMaxDelayMs,
              () => stopping,
            );
            if (!back) throw new Error('stopped while the database was unavailable; the job runs again later');
            log.info('the database is back: running the job again');
          }
        },
      );
      workerIds.set(job.queue, [...(workerIds.get(job.queue) ?? []), workerId]);
    }
    if (job.cron) await boss.schedule(job.queue, job.cron);
  }
  const notify = (queue: string) => {
    for (const id of workerIds.get(queue) ?? []) boss.notifyWorker(id);
  };
  const listener = new Listener({
    ...listenerConnection(deps.config, deps.availability, connectionString),
    applicationName: 'survey-service-worker-wake',
    channels: [wakeChannel],
    onNotification: (message) => {
      if (message.payload) notify(message.payload);
    },
    // Wake-ups sent while the listener was away are lost: every worker looks for due jobs now (they poll, too).
    onListening: () => {
      for (const job of jobs) notify(job.queue);
    },
  });
  await listener.start();
  return async () => {
    stopping = true;
    await listener.close();
    for (const job of jobs) await boss.offWork(job.queue);
  };
}
