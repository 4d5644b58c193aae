/**
 * The test harness's Citus mode (`CITUS=1`): instead of a template database cloned per test file, every test file
 * gets a database made on the local three-node Citus cluster, then migrated and given pg-boss's schema. A
 * template cannot be cloned on Citus: the workers hold the shards, and `create database … template` copies only
 * the coordinator's catalog. Making one takes seconds, so a file done with its database hands it, emptied and
 * checked, to a later file of the same run (database-pool.ts).
 *
 * The cluster is `../shared/citus/cluster.sh` (relative to the repository root; `CITUS_CLUSTER_SCRIPT` overrides
 * it): `up` starts it (idempotent), `createdb NAME` makes a database on every node with the extension and the
 * workers registered, `dropdb NAME` drops it everywhere, `url NAME` prints the coordinator's connection string.
 * The migrations distribute the tenant tables, as they do on any database with the extension
 * (2026-11-26T0500_distribute_on_citus).
 *
 * `CITUS_LOG_MULTI_SHARD=1` makes every node log each multi-shard plan with its statement (a database setting,
 * made before anything connects): `LOG:  multi-task query about to be executed`, then `STATEMENT:` in
 * /var/tmp/citus-cluster/node*.log.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { openDatabase } from '../../server/src/db/database.js';
import { migrateToLatest } from '../../server/src/db/migrate.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether the harness runs on the Citus cluster: `CITUS=1`. */
export const citusMode = process.env.CITUS === '1';

export function clusterScript(): string {
  return path.resolve(repoRoot, process.env.CITUS_CLUSTER_SCRIPT ?? '../shared/citus/cluster.sh');
}

async function cluster(...args: string[]): Promise<string> {
  const { stdout } = await run('bash', [clusterScript(), ...args], { maxBuffer: 1 << 20 });
  return stdout.trim();
}

/** Starts the cluster if it is not running. */
export async function clusterUp(): Promise<void> {
  await cluster('up');
}

/** `postgres://…/{database}` on the coordinator: put a database name in place of `{database}`. */
export async function clusterServerUrl(): Promise<string> {
  return cluster('url', '{database}');
}

/**
 * Drops the database on every node. A few attempts: the coordinator's `DROP DATABASE … WITH (FORCE)` reaches a
 * worker while a session there (Citus's maintenance daemon, or a connection it just opened) still uses the
 * database now and then ("database … is being accessed by other users"). What is left then differs (the
 * coordinator's copy, or one worker's), and the propagated statement fails on a node that has none ("does not
 * exist"): later attempts drop each node's copy on its own.
 */
export async function dropCitusDatabase(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await oneAtATime(async () => {
        if (attempt === 1) await cluster('dropdb', name);
        else await dropOnEachNode(name);
      });
      return;
    } catch (error) {
      if (attempt === 5) throw error;
      // A backoff before the next attempt (the other users of the database leave it), not a wait for anything.
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

/** Any number: the advisory lock the run's test processes take turns by to create or drop a database. */
const databaseDdlLock = 7_214_001;

/**
 * Creating or dropping a database on the cluster writes the nodes' shared catalogs (the extension's roles, the node
 * list): two test files doing it at once fail now and then ("tuple concurrently updated", then "failure on
 * connection marked as essential"). So the test processes take turns, holding an advisory lock in the
 * coordinator's maintenance database. Migrating the new database is per database and needs no turn.
 */
async function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const maintenance = new pg.Client({ connectionString: (await clusterServerUrl()).replace('{database}', 'postgres') });
  await maintenance.connect();
  try {
    await maintenance.query('select pg_advisory_lock($1)', [databaseDdlLock]);
    return await work();
  } finally {
    // Ending the session releases the lock.
    await maintenance.end();
  }
}

/** The database's copy on each node, workers first, each dropped there alone (not propagated). */
async function dropOnEachNode(name: string): Promise<void> {
  const maintenance = (await clusterServerUrl()).replace('{database}', 'postgres');
  const coordinator = new pg.Client({ connectionString: maintenance });
  await coordinator.connect();
  let ports: number[];
  try {
    const { rows } = await coordinator.query<{ nodeport: number }>(
      'select nodeport from pg_dist_node order by groupid desc',
    );
    ports = rows.map((row) => row.nodeport);
  } finally {
    await coordinator.end();
  }
  for (const port of ports) {
    const url = new URL(maintenance);
    url.port = String(port);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query('set citus.enable_create_database_propagation = off');
      await client.query(`drop database if exists "${name}" with (force)`);
    } finally {
      await client.end();
    }
  }
}

/**
 * A database on every node, migrated (which distributes the tenant tables) and with pg-boss's schema, as global-setup
 * prepares the template on plain PostgreSQL. Returns the coordinator's URL for it.
 */
export async function createCitusDatabase(name: string): Promise<string> {
  const url = await oneAtATime(() => cluster('createdb', name));
  try {
    if (process.env.CITUS_LOG_MULTI_SHARD === '1') await logMultiShardQueries(url, name);
    const database = openDatabase(url, 2);
    try {
      await migrateToLatest(database.db);
    } finally {
      await database.close();
    }
    const boss = new PgBoss({ connectionString: url, schema: 'pgboss', supervise: false, schedule: false, max: 1 });
    await boss.start();
    await boss.stop({ graceful: false, wait: true });
  } catch (error) {
    await dropCitusDatabase(name).catch(() => {});
    throw error;
  }
  return url;
}

/** `citus.multi_task_query_log_level` for the database; the coordinator propagates the setting to the workers. */
async function logMultiShardQueries(url: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`alter database "${name}" set citus.multi_task_query_log_level = 'log'`);
    await client.query(`alter database "${name}" set log_min_error_statement = 'log'`);
  } finally {
    await client.end();
  }
}
