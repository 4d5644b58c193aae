/**
 * How a module declares its background jobs. A queue (`defineQueue`) is what senders need: the queue's name,
 * its retry policy and a `send` typed by the job's data. A job (`defineJob`) adds the worker to a queue. The two
 * are apart because the code that sends is usually what the worker runs (a service accepts a request and
 * enqueues it, the worker's runner uses that service): declared in one file with the worker, the queue would tie
 * service → jobs → runner → service into a cycle. So a module declares its queue beside its service and its
 * jobs in its `jobs.ts`, which only the registry (registry.ts) reads, through the module's index.
 */
import type PgBoss from 'pg-boss';
import type { DbOrTx } from '../db/database.js';
import type { Dependencies } from '../dependencies.js';
import { bossDb, sendInTransaction } from './enqueue.js';

/** pg-boss's settings of a queue (retries, expiry…), applied when the queue is created. */
export type QueueOptions = Omit<PgBoss.Queue, 'name'>;

/** A queue whose entries carry `Data`. */
export interface Queue<Data extends object> {
  /** `domain.action`; never renamed once deployed (queued entries and schedules refer to it). */
  readonly name: string;
  readonly options: QueueOptions;
  /** Enqueues inside `db`'s transaction and wakes the workers when it commits (enqueue.ts); the entry's id. */
  send(boss: PgBoss, db: DbOrTx, data: Data, options?: PgBoss.SendOptions): Promise<string | null>;
  /** Withdraws an entry not started yet, inside `db`'s transaction. */
  cancel(boss: PgBoss, db: DbOrTx, id: string): Promise<void>;
}

export function defineQueue<Data extends object = object>(name: string, options: QueueOptions): Queue<Data> {
  return {
    name,
    options,
    send: (boss, db, data, sendOptions) => sendInTransaction(boss, db, name, data, sendOptions),
    cancel: (boss, db, id) => boss.cancel(name, id, { db: bossDb(db) }),
  };
}

/** What a worker process runs for a queue. */
export interface Worker<Data extends object> {
  /** How many jobs of this queue one worker process runs at once (1 when absent). */
  concurrency?: number;
  /** A cron schedule, for periodic jobs. */
  cron?: string;
  work(job: PgBoss.Job<Data>, deps: Dependencies): Promise<unknown>;
}

/**
 * A queue with its worker, as the registry lists it. `work` is a method, whose parameters TypeScript compares
 * both ways, so a `Job<AnalysisJobData>` is a `Job`: the registry lists the jobs of every data type without a
 * cast. That is sound because a worker receives only its own queue's entries, and only its queue's typed `send`
 * (or its cron schedule, for jobs that read no data) writes them.
 */
export interface Job<Data extends object = object> extends Worker<Data> {
  readonly queue: string;
  readonly options: QueueOptions;
}

export function defineJob<Data extends object>(queue: Queue<Data>, worker: Worker<Data>): Job<Data> {
  return { queue: queue.name, options: queue.options, ...worker };
}
