/**
 * Kysely over node-postgres. Kysely (not an ORM) keeps SQL visible and typed; `pg` is the reference driver.
 * Every repository takes the `Db` (or a transaction of it) as its first argument.
 */
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
export type DbOrTx = Db | Tx;

// bigint counts (COUNT(*)) arrive as strings by default; they are always far below 2^53 here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface PoolOptions {
  /**
   * Off for bookkeeping writes (rate-limit counters, a key's last use) that are fine to lose in the last few
   * milliseconds before a crash: the request then does not wait for a WAL flush. Never for business data.
   */
  synchronousCommit?: boolean;
}

export function openDatabase(connectionString: string, poolSize = 10, options: PoolOptions = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    ...(options.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    // Kysely's destroy() ends the pool it was given.
    close: () => db.destroy(),
  };
}
