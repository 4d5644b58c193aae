/**
 * Once per test run: a PostgreSQL server (DATABASE_URL's, or an embedded one in a temporary folder) and a
 * template database with every migration and the pg-boss schema applied. Each test file then gets its own
 * database cloned from the template (test/helpers/database.ts), so files run in parallel without sharing rows.
 * With `CITUS=1` the server is the local Citus cluster instead, and there is no template (see setupCitus below).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../server/src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrateToLatest } from '../../server/src/db/migrate.js';
import { citusMode, clusterServerUrl, clusterUp, dropCitusDatabase } from '../citus/cluster.js';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `postgres://…/{database}`: put a database name in place of `{database}`. */
    databaseServer: string;
    templateDatabase: string;
    /** `CITUS=1` only: this run's folder of databases free for reuse (test/citus/database-pool.ts). */
    citusDatabasePool: string;
  }
}

export function withDatabase(serverUrl: string, database: string): string {
  return serverUrl.replace('{database}', database);
}

export default async function setup(project: TestProject) {
  if (citusMode) return setupCitus(project);
  let embedded: EmbeddedPostgres | undefined;
  let folder: string | undefined;
  let serverUrl: string;
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '/{database}';
    serverUrl = url.toString().replace('%7Bdatabase%7D', '{database}');
  } else {
    folder = mkdtempSync(path.join(tmpdir(), 'survey-service-test-'));
    // Reachable by the postgres OS user when the tests run as root (see server/src/db/embedded.ts).
    chmodSync(folder, 0o755);
    embedded = await startEmbeddedPostgres({ dataDir: folder, port: await freePort(), database: 'postgres' });
    serverUrl = embedded.serverUrl('{database}');
  }
  let admin: pg.Client;
  let template: string;
  try {
    const maintenanceDb = process.env.DATABASE_URL
      ? new URL(process.env.DATABASE_URL).pathname.slice(1) || 'postgres'
      : 'postgres';
    template = `survey_test_template_${process.pid}`;
    admin = new pg.Client({ connectionString: withDatabase(serverUrl, maintenanceDb) });
    await admin.connect();
    await admin.query(`drop database if exists ${template} with (force)`);
    await admin.query(`create database ${template}`);

    const templateUrl = withDatabase(serverUrl, template);
    const database = openDatabase(templateUrl, 2);
    await migrateToLatest(database.db);
    await database.close();
    const boss = new PgBoss({
      connectionString: templateUrl,
      schema: 'pgboss',
      supervise: false,
      schedule: false,
      max: 1,
    });
    await boss.start();
    await boss.stop({ graceful: false, wait: true });
  } catch (error) {
    // Never leave a server running behind a failed set-up.
    await embedded?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
    throw error;
  }

  project.provide('databaseServer', serverUrl);
  project.provide('templateDatabase', template);

  return async () => {
    const leftovers = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like 'survey_test_%'`,
    );
    for (const row of leftovers.rows) {
      if (row.datname === template || row.datname.startsWith(`survey_test_${process.pid}_`)) {
        await admin.query(`drop database if exists ${row.datname} with (force)`);
      }
    }
    await admin.end();
    await embedded?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  };
}

/**
 * `CITUS=1`: the local Citus cluster (test/citus/cluster.ts), started if it is not running. No template is made
 * (one cannot be cloned on Citus); `templateDatabase` is only the name that carries this run's process id, which
 * test/helpers/database.ts puts into each file's database name. Files hand their databases on to later files
 * through the run's pool folder (test/citus/database-pool.ts); teardown drops this run's databases, pooled or
 * left over, and the folder.
 */
async function setupCitus(project: TestProject) {
  await clusterUp();
  const serverUrl = await clusterServerUrl();
  // The databases of runs that ended without their teardown (killed, or the machine stopped): each node runs a
  // Citus maintenance daemon per database, and leftovers use up `max_worker_processes`. Those of a process still
  // alive (another run beside this one) are left alone; so are their pool folders.
  await dropCitusTestDatabases(serverUrl, (pid) => !processAlive(pid), { ignoreFailures: true });
  for (const entry of readdirSync(tmpdir())) {
    const pid = Number(/^survey-test-citus-pool-(\d+)$/.exec(entry)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && !processAlive(pid)) {
      rmSync(path.join(tmpdir(), entry), { recursive: true, force: true });
    }
  }
  const pool = path.join(tmpdir(), `survey-test-citus-pool-${process.pid}`);
  rmSync(pool, { recursive: true, force: true });
  mkdirSync(pool, { recursive: true });
  project.provide('databaseServer', serverUrl);
  project.provide('templateDatabase', `survey_test_template_${process.pid}`);
  project.provide('citusDatabasePool', pool);
  return async () => {
    // The folder first: nothing is leased from it while its databases are dropped.
    rmSync(pool, { recursive: true, force: true });
    await dropCitusTestDatabases(serverUrl, (pid) => pid === process.pid);
  };
}

/** Drops the test databases on the cluster whose run (the process id in their name) `ofRun` picks. */
async function dropCitusTestDatabases(
  serverUrl: string,
  ofRun: (pid: number) => boolean,
  options: { ignoreFailures?: boolean } = {},
): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like 'survey_test_%'`,
    );
    for (const { datname } of rows) {
      const pid = Number(/^survey_test_(?:template_)?(\d+)_/.exec(datname)?.[1]);
      if (!Number.isInteger(pid) || !ofRun(pid)) continue;
      const dropped = dropCitusDatabase(datname);
      await (options.ignoreFailures ? dropped.catch(() => {}) : dropped);
    }
  } finally {
    await admin.end();
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
