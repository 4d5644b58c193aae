/**
 * Sending jobs. `sendInTransaction` enqueues inside the caller's transaction (so the row that describes a job
 * never exists without its queue entry, nor the reverse) and wakes the workers when that transaction commits:
 * `pg_notify` is delivered on commit, and every worker process LISTENs (see boss.ts), so a job starts at once
 * instead of at the workers' next poll. Polling stays as the fallback.
 */
import { CompiledQuery, sql } from 'kysely';
import type PgBoss from 'pg-boss';
import type { DbOrTx } from '../db/database.js';

export const wakeChannel = 'survey_service_jobs';

/** Lets pg-boss run its INSERT on our connection, inside our transaction. */
export function bossDb(db: DbOrTx): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[]) {
      const result = await db.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] as never[] };
    },
  };
}

export async function sendInTransaction(
  boss: PgBoss,
  db: DbOrTx,
  queue: string,
  data: object,
  options: PgBoss.SendOptions = {},
): Promise<string | null> {
  const id = await boss.send(queue, data, { ...options, db: bossDb(db) });
  if (options.startAfter === undefined) await sql`select pg_notify(${wakeChannel}, ${queue})`.execute(db);
  return id;
}
