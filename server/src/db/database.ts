/**
 * Kysely over node-postgres. Kysely (not an ORM) keeps SQL visible and typed; `pg` is the reference driver.
 * Every repository takes the `Db` (or a transaction of it) as its first argument.
 */
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { DatabaseAvailability } from './availability.js';
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
   * Off for bookkeeping writes (rate-limit counters, a key's last use, the audit entries of reads) that are fine to
   * lose in the last few milliseconds before a crash of PostgreSQL: the request then does not wait for a WAL flush.
   * Never for business data.
   */
  synchronousCommit?: boolean;
  /** Told of every connection opened and every connection-class failure (availability.ts). */
  availability?: DatabaseAvailability;
  /** How long opening a connection may take before it fails (and the request answers 503). */
  connectTimeoutMs?: number;
}

export function openDatabase(connectionString: string, poolSize = 10, options: PoolOptions = {}): DatabaseHandle {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // The limit on opening a connection only, not on waiting for a free one (the pool's own
    // connectionTimeoutMillis would also fail requests queued behind busy connections).
    Client: class extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
      }
    },
    keepAlive: true,
    ...(options.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
  });
  const availability = options.availability;
  // A client that loses its connection must not crash the process, idle in the pool (the pool's 'error') or
  // checked out between two queries (its own 'error', which pg-pool does not listen to while it is lent out):
  // its queries fail, the pool drops it on release, and the next connect opens a new one.
  pool.on('error', (error) => availability?.failed(error, 'pool'));
  pool.on('connect', (client) => {
    client.on('error', (error) => availability?.failed(error, 'pool'));
    availability?.reached();
  });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: preparingPool(pool, availability) }),
  });
  return {
    db,
    pool,
    // Kysely's destroy() ends the pool it was given.
    close: () => db.destroy(),
  };
}

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it on each execution: for a short query that
 * is most of its cost (the surveys list: ~600 µs of server CPU unnamed, ~330 µs prepared). The connections
 * Kysely takes from this pool send short data statements as named prepared statements instead (the name is a
 * hash of the text; node-postgres parses each once per connection). Bounded: at most `maxPreparedPerConnection`
 * names per connection (statements with varying text, such as multi-row inserts, fall back to unnamed once
 * the budget is spent), and only statements under `maxPreparedLength` characters — long analytical queries keep
 * a plan made for their parameters.
 */
const maxPreparedPerConnection = 200;
const maxPreparedLength = 3_000;
const dataStatement = /^\s*(select|insert|update|delete|with)\b/i;
const preparedNames = new WeakMap<pg.PoolClient, Set<string>>();

function preparingPool(pool: pg.Pool, availability: DatabaseAvailability | undefined): pg.Pool {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'connect') return Reflect.get(target, property, receiver) as unknown;
      return async () => {
        const client = await connect().catch((error: unknown) => {
          availability?.failed(error, 'pool');
          throw error;
        });
        if (!preparedNames.has(client)) prepareStatementsOf(client);
        return client;
      };
    },
  });
}

/**
 * The name of a statement's text, remembered: a statement Kysely compiled once (`compiledOnce`) comes back as the
 * same string, whose hash V8 keeps, so a lookup costs less than hashing its few kilobytes with SHA-1 again.
 */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `k${createHash('sha1').update(text).digest('base64url')}`;
    if (statementNames.size >= 1_000) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}

function prepareStatementsOf(client: pg.PoolClient): void {
  const names = new Set<string>();
  preparedNames.set(client, names);
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
    text: unknown,
    values?: unknown,
    ...rest: unknown[]
  ) => {
    if (
      typeof text === 'string' &&
      Array.isArray(values) &&
      rest.length === 0 &&
      text.length < maxPreparedLength &&
      dataStatement.test(text)
    ) {
      const name = statementName(text);
      if (names.has(name) || names.size < maxPreparedPerConnection) {
        names.add(name);
        return query({ name, text, values });
      }
    }
    return query(text, values, ...rest);
  };
}
