/**
 * A fresh, migrated database for one test file, cloned from the run's template.
 *
 * With `CITUS=1` (test/citus/cluster.ts) there is no template: the database is made on the local Citus cluster
 * (`cluster.sh createdb`), migrated and given pg-boss's schema here, and dropped with `cluster.sh dropdb`.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { citusMode, createCitusDatabase, dropCitusDatabase } from '../citus/cluster.js';

export interface TestDatabase {
  url: string;
  name: string;
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
  const template = inject('templateDatabase');
  const pid = template.split('_').pop();
  const name = `survey_test_${pid}_${randomBytes(5).toString('hex')}`;
  if (citusMode) {
    return { name, url: await createCitusDatabase(name), drop: () => dropCitusDatabase(name) };
  }
  const client = admin();
  await client.connect();
  try {
    await client.query(`create database ${name} template ${template}`);
  } finally {
    await client.end();
  }
  return {
    name,
    url: inject('databaseServer').replace('{database}', name),
    async drop() {
      const c = admin();
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
