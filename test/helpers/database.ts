/**
 * A fresh, migrated database for one test file, cloned from the run's template.
 *
 * With `CITUS=1` (test/citus/cluster.ts) there is no template: the database is made on the local Citus cluster
 * (`cluster.sh createdb`), migrated and given pg-boss's schema here. Making one costs seconds, so `release()` there
 * resets it to that state and hands it to the next file of the run (test/citus/database-pool.ts); a file that finds
 * the pool empty makes a new one. On plain PostgreSQL `release()` drops the clone.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { citusMode, createCitusDatabase, dropCitusDatabase } from '../citus/cluster.js';
import { fingerprintDatabase, leaseDatabase, returnDatabase, type Fingerprint } from '../citus/database-pool.js';

export interface TestDatabase {
  url: string;
  name: string;
  /** Done with it: dropped, or on Citus reset and reused by a later file. Nothing after `drop()`. */
  release(): Promise<void>;
  /** Drops it now (with its connections) and never reuses it; `release()` is then nothing. */
  drop(): Promise<void>;
}

function admin(): pg.Client {
  const serverUrl = inject('databaseServer');
  const maintenance = process.env.DATABASE_URL
    ? new URL(process.env.DATABASE_URL).pathname.slice(1) || 'postgres'
    : 'postgres';
  return new pg.Client({ connectionString: serverUrl.replace('{database}', maintenance) });
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (citusMode) return citusTestDatabase();
  const template = inject('templateDatabase');
  const name = `survey_test_${template.split('_').pop()}_${randomBytes(5).toString('hex')}`;
  const client = admin();
  await client.connect();
  try {
    await client.query(`create database ${name} template ${template}`);
  } finally {
    await client.end();
  }
  const drop = once(async () => {
    const c = admin();
    await c.connect();
    try {
      await c.query(`drop database if exists ${name} with (force)`);
    } finally {
      await c.end();
    }
  });
  return { name, url: inject('databaseServer').replace('{database}', name), release: drop, drop };
}

/** A database of the run's pool, or a new one; its fingerprint is what a reset must get back to. */
async function citusTestDatabase(): Promise<TestDatabase> {
  const pool = inject('citusDatabasePool');
  let database = leaseDatabase(pool);
  if (!database) {
    const name = `survey_test_${inject('templateDatabase').split('_').pop()}_${randomBytes(5).toString('hex')}`;
    const url = await createCitusDatabase(name);
    let fingerprint: Fingerprint | undefined;
    try {
      fingerprint = await fingerprintDatabase(url);
    } catch (error) {
      // Usable all the same; only not reusable.
      console.warn(`Citus database pool: no fingerprint of ${name} (${(error as Error).message})`);
    }
    database = { name, url, fingerprint: fingerprint ?? {} };
  }
  const { name, url } = database;
  let done = false;
  return {
    name,
    url,
    async release() {
      if (done) return;
      done = true;
      const reusable = Object.keys(database.fingerprint).length > 0;
      if (!reusable || !(await returnDatabase(pool, database))) await dropCitusDatabase(name);
    },
    async drop() {
      if (done) return;
      done = true;
      await dropCitusDatabase(name);
    },
  };
}

/** `f` on its first call; later calls wait for that one. */
function once(f: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= f());
}
