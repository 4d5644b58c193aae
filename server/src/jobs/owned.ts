/**
 * Job ownership: how a long job on one work item (an analysis, an export, a respondent sync, a distribution's
 * send or reminder) runs in one worker at a time and, when that worker dies, resumes within seconds.
 *
 * The owner holds a session advisory lock on the item, on a connection of its own: PostgreSQL drops the lock the
 * moment the owner's process dies (even on SIGKILL), so "lock free but item unfinished" means "its owner is
 * gone", and whoever receives the item's next queue entry takes it over. A job that finds the lock held answers
 * `busy`, and its worker enqueues a check of the item for later. A job that takes the lock loads the item and
 * stops if it is finished, gives it up after `maxRuns` interrupted runs, marks a run started, enqueues a check of
 * the same item WATCHDOG_SECONDS ahead (the dead-man's switch), then works, and unlocks at the end whatever
 * happened. A check that finds the owner alive looks again later (`checkAgainLater`) while the item is
 * unfinished; one that finds it gone resumes the item. Each runner keeps its domain: what its item is, what
 * "finished" means, how it fails and what a run does.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Dependencies } from '../dependencies.js';

/** Seconds between dead-man's-switch checks of an item being worked on. */
export const WATCHDOG_SECONDS = 5;

/** Enqueues a check of the item `startAfterSeconds` ahead; the queue entry's id (to withdraw it when done). */
export type Watchdog = (startAfterSeconds: number) => Promise<string | null>;

/** The steps of one owned run, on the owner's connection. */
export interface Ownership<Item, Run> {
  /** The advisory lock's name, `<queue or kind>:<item id>`; unchanged across versions, or two could run at once. */
  lock: string;
  /** Settings of the owner's session, made once the lock is taken and undone before it is released. */
  session?: { enter(conn: Db): Promise<unknown>; leave(conn: Db): Promise<unknown> };
  /** The item, or `undefined` when there is nothing (more) to do: finished, gone, or not its turn. */
  load(conn: Db): Promise<Item | undefined>;
  /** The max-runs rule: an item that `count` runs have started and none finished is given up. Absent: no limit. */
  maxRuns?: { limit: number; count(item: Item): number; giveUp(conn: Db, item: Item): Promise<void> };
  /** Marks a run started (one more run); what the work needs, or `undefined` when it is finished after all. */
  beginRun(conn: Db, item: Item): Promise<Run | undefined>;
  watchdog: Watchdog;
}

const lockKey = (name: string) => sql`hashtextextended(${name}, 0)`;

/**
 * Runs `work` on the item if no live worker owns it. `busy`: a live worker holds it (check it again later);
 * `finished`: nothing (more) to do here. `watchdogId` is the run's pending check, for work that withdraws it in
 * the transaction that finishes the item.
 */
export async function runOwned<Item, Run>(
  deps: Pick<Dependencies, 'db'>,
  ownership: Ownership<Item, Run>,
  work: (conn: Db, run: Run, watchdogId: string | null) => Promise<void>,
): Promise<'busy' | 'finished'> {
  return deps.db.connection().execute(async (conn) => {
    const locked = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${lockKey(ownership.lock)}) as ok`.execute(
      conn,
    );
    if (!locked.rows[0]?.ok) return 'busy';
    try {
      await ownership.session?.enter(conn);
      const item = await ownership.load(conn);
      if (item === undefined) return 'finished';
      const { maxRuns } = ownership;
      if (maxRuns && maxRuns.count(item) >= maxRuns.limit) {
        await maxRuns.giveUp(conn, item);
        return 'finished';
      }
      const run = await ownership.beginRun(conn, item);
      if (run === undefined) return 'finished';
      const watchdogId = await ownership.watchdog(WATCHDOG_SECONDS);
      await work(conn, run, watchdogId);
      return 'finished';
    } finally {
      await ownership.session?.leave(conn).catch(() => undefined);
      await sql`select pg_advisory_unlock(${lockKey(ownership.lock)})`.execute(conn).catch(() => undefined);
    }
  });
}

/** The dead-man's switch ticking on: a check that found the item's owner alive looks again later. */
export async function checkAgainLater(watchdog: Watchdog): Promise<void> {
  await watchdog(WATCHDOG_SECONDS);
}
