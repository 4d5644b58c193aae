/**
 * One SCIM change, all or nothing: the respondent's write (through the respondents module, which opens its own
 * transaction — a savepoint here) and the SCIM row's. A keyed POST already runs in the request's one transaction
 * (http/idempotency.ts), where the change gets a savepoint of its own, so that a refused change leaves nothing
 * behind while the refusal is still stored as the key's answer; otherwise it runs in a transaction of its own.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inPinnedTransaction } from '../../db/pinned.js';
import type { Dependencies } from '../../dependencies.js';

export interface UnitContext {
  deps: Dependencies;
  /** Whether `deps.db` is the request's own transaction (a POST with an Idempotency-Key). */
  pinned: boolean;
}

let savepoints = 0;

export async function inUnit<T>(context: UnitContext, work: (db: Db) => Promise<T>): Promise<T> {
  if (!context.pinned) return inPinnedTransaction(context.deps.pool, work);
  const name = sql.raw(`scim_unit_${++savepoints}`);
  const db = context.deps.db;
  await sql`savepoint ${name}`.execute(db);
  try {
    const result = await work(db);
    await sql`release savepoint ${name}`.execute(db);
    return result;
  } catch (error) {
    await sql`rollback to savepoint ${name}`.execute(db);
    await sql`release savepoint ${name}`.execute(db);
    throw error;
  }
}
