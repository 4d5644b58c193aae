/**
 * One PostgreSQL transaction that a whole request runs in, through an ordinary-looking `Db`: every query of
 * the returned Kysely goes to the same connection, and a `db.transaction()` inside it becomes a savepoint. The
 * idempotency store uses it to commit a request's writes and its stored answer together (http/idempotency.ts):
 * if the process dies, PostgreSQL rolls both back.
 *
 * Limitation: the work must not run two `transaction()`s in parallel (savepoints nest, they do not interleave).
 * Parallel plain queries are fine (node-postgres queues them on the connection).
 */
import {
  Kysely,
  PostgresAdapter,
  PostgresDriver,
  PostgresIntrospector,
  PostgresQueryCompiler,
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
} from 'kysely';
import type pg from 'pg';
import type { Db } from './database.js';
import type { Database } from './schema.js';

class SavepointDriver extends PostgresDriver {
  private depth = 0;

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    this.depth += 1;
    await connection.executeQuery(CompiledQuery.raw(`savepoint request_sp_${this.depth}`));
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint request_sp_${this.depth}`));
    this.depth -= 1;
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint request_sp_${this.depth}`));
    await connection.executeQuery(CompiledQuery.raw(`release savepoint request_sp_${this.depth}`));
    this.depth -= 1;
  }

  // The connection belongs to the enclosing transaction: never end it from here.
  override async destroy(): Promise<void> {}
}

function pinnedDialect(client: pg.PoolClient): Dialect {
  // A "pool" that always hands out the one client, and whose release does nothing.
  const pinned = { query: client.query.bind(client), release: () => {} };
  const pool = { connect: async () => pinned, end: async () => {} };
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new SavepointDriver({ pool: pool as never }),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

export class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super('rolled back on purpose');
  }
}

/**
 * Runs `work` in one transaction on one connection of `pool`. Commits when it returns; rolls back when it
 * throws (a `Rollback` carries a value out instead of an error).
 */
export async function inPinnedTransaction<T>(pool: pg.Pool, work: (db: Db) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection whose BEGIN, COMMIT or ROLLBACK failed is discarded, never returned to the pool mid-transaction.
  let healthy = false;
  try {
    await client.query('begin');
    const db = new Kysely<Database>({ dialect: pinnedDialect(client) }) as Db;
    let result: T;
    try {
      result = await work(db);
    } catch (error) {
      await client.query('rollback');
      healthy = true;
      if (error instanceof Rollback) return error.value as T;
      throw error;
    }
    await client.query('commit');
    healthy = true;
    return result;
  } finally {
    client.release(healthy ? undefined : true);
  }
}
