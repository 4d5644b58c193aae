/**
 * What every benchmark needs: a throw-away database, a tenant whose limits never refuse, the service on them
 * (startBenchService), and BENCHMARKS.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig, type Config } from '../../server/src/config.js';
import { openDatabase, type Db } from '../../server/src/db/database.js';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { createLogger } from '../../server/src/logger.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { startProcess } from '../../server/src/start.js';
import { freePort } from '../free-port.js';

export const host = '127.0.0.1';

/** The middle value of `values`, or the mean of the two middle ones. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A database of its own: on `server`'s PostgreSQL (DATABASE_URL's unless given; created, then dropped), else on an
 * embedded server.
 */
export async function benchDatabase(
  label: string,
  server = process.env.DATABASE_URL,
): Promise<{ url: string; release(): Promise<void> }> {
  const name = `survey_bench_${label}_${process.pid}`;
  if (server) {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      async release() {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      },
    };
  }
  const folder = mkdtempSync(path.join(tmpdir(), 'survey-bench-'));
  chmodSync(folder, 0o755); // reachable by the postgres OS user when run as root
  const embedded = await startEmbeddedPostgres({ dataDir: folder, port: await freePort(), database: name });
  return {
    url: embedded.url,
    async release() {
      await embedded.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

export interface BenchTenant {
  organizationId: string;
  /** A live key with every scope. */
  key: string;
}

/** A BUSINESS organization whose limit override is so high that the limiter counts every request but refuses none. */
export async function benchTenant(db: Db): Promise<BenchTenant> {
  const organization = await insertOrganization(db, { name: 'Benchmark', plan: 'BUSINESS' });
  await db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: 100_000_000, rate_limit_per_day: 1_000_000_000 })
    .where('id', '=', organization.id)
    .execute();
  const { key } = await insertKey(db, {
    organizationId: organization.id,
    environment: 'LIVE',
    name: 'bench',
    scopes: ['*'],
  });
  return { organizationId: organization.id, key };
}

/** Replaces (or appends) the section that starts with `heading` in BENCHMARKS.md. */
export function writeBenchmarkSection(heading: string, markdown: string): void {
  const file = path.join(root, 'BENCHMARKS.md');
  const current = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmarks\n\nNumbers from `npm run bench -- <name>`, one section per benchmark.\n';
  const start = current.indexOf(heading);
  let next: string;
  if (start < 0) {
    next = `${current.trimEnd()}\n\n${markdown}`;
  } else {
    const after = current.indexOf('\n## ', start + heading.length);
    next = current.slice(0, start) + markdown.trimEnd() + (after < 0 ? '' : `\n\n${current.slice(after + 1)}`);
  }
  writeFileSync(file, `${next.trimEnd()}\n`);
}

export interface BenchProcess {
  child: ChildProcess;
  /** What `ready` matched in the output: its first group (a URL, say), else the whole match. */
  ready: string;
  /** Everything the process wrote to stdout (and to stderr, unless inherited) so far. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `script` (a TypeScript entry point, run through tsx from the repository root, or from `cwd`: another checkout) in
 * its own process, resolved once its output matches `ready`. `env` is added to this process's environment;
 * `nodeOptions` go before the entry point (a heap cap, a CPU profile), `args` after it; `inheritStderr` shows its
 * stderr here instead of keeping it.
 */
export async function startBenchProcess(
  script: string,
  options: {
    env: Record<string, string>;
    ready: RegExp;
    args?: string[];
    nodeOptions?: string[];
    inheritStderr?: boolean;
    cwd?: string;
  },
): Promise<BenchProcess> {
  const child = spawn(
    process.execPath,
    [...(options.nodeOptions ?? []), '--import', 'tsx', script, ...(options.args ?? [])],
    {
      cwd: options.cwd ?? root,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', options.inheritStderr ? 'inherit' : 'pipe'],
    },
  );
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<string>((resolve, reject) => {
    const append = (chunk: Buffer) => {
      output += chunk.toString();
      const match = options.ready.exec(output);
      if (match) resolve(match[1] ?? match[0]);
    };
    child.stdout!.on('data', append);
    child.stderr?.on('data', append);
    void exited.then(() => reject(new Error(`${script} exited (${child.exitCode}) during start-up:\n${output}`)));
  });
  return {
    child,
    ready,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** The settings every service process of a benchmark runs with: production-like, logging warnings only. */
const productionEnv = { NODE_ENV: 'production', LOG_LEVEL: 'warn' };

export interface WorkerProcess {
  child: ChildProcess;
  /** Peak resident memory of the worker so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * A worker (`npm start -- --role worker`) in its own process, as in production, resolved once it says it runs.
 * `env` adds settings; `nodeOptions` go before the entry point (e.g. a heap cap).
 */
export async function startWorkerProcess(
  databaseUrl: string,
  options: { env?: Record<string, string>; nodeOptions?: string[] } = {},
): Promise<WorkerProcess> {
  const worker = await startBenchProcess('server/src/main.ts', {
    env: { ...productionEnv, DATABASE_URL: databaseUrl, ...options.env },
    ready: /Worker: /,
    args: ['--role', 'worker'],
    nodeOptions: options.nodeOptions,
    inheritStderr: true,
  });
  return {
    child: worker.child,
    peakRssMb: () =>
      Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${worker.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
    stop: worker.stop,
  };
}

export interface ApiProcess {
  child: ChildProcess;
  /** Base URL of the API (without /api/v1). */
  url: string;
  /** Everything the process wrote to stdout and stderr so far (its log, at LOG_LEVEL). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The API (`server/src/main.ts`, ROLE=api, on a free port) in its own process, as `npm start` runs it, production-like
 * (NODE_ENV=production, log level warn); resolved with its URL once it listens. `env` adds settings (API_PROCESSES…),
 * `nodeOptions` go before the entry point (a CPU profile), `cwd` runs another checkout's server.
 */
export async function startApiProcess(
  databaseUrl: string,
  options: { env?: Record<string, string>; nodeOptions?: string[]; cwd?: string } = {},
): Promise<ApiProcess> {
  const api = await startBenchProcess('server/src/main.ts', {
    env: { ...productionEnv, ROLE: 'api', PORT: '0', PUBLIC_BASE_URL: '', DATABASE_URL: databaseUrl, ...options.env },
    ready: apiReady,
    nodeOptions: options.nodeOptions,
    cwd: options.cwd,
  });
  return { child: api.child, url: api.ready, output: api.output, stop: () => api.stop() };
}

export interface BenchService extends BenchTenant {
  /** Base URL of the API (without /api/v1). */
  url: string;
  databaseUrl: string;
  /**
   * The database, migrated: the in-process service's own pool (closed when the API stops), or beside an API process
   * a pool of this process's (open until `close`).
   */
  db: Db;
  /** Calls the API with the tenant's key (benchApi). */
  api: ReturnType<typeof benchApi>;
  /** The API's process (layout `api-process`): its pid for CPU figures, its log. */
  apiProcess: ApiProcess | undefined;
  /** Stops the API and keeps the database (a benchmark that measures SQL alone once the API seeded it). */
  stopApi(): Promise<void>;
  /** Stops the API, closes the pool and drops the database (unless the benchmark brought its own). */
  close(): Promise<void>;
}

/**
 * The service a benchmark measures, started one way for all: its own database (benchDatabase(label), or
 * `databaseUrl`, a database the benchmark made and drops itself), migrated by the service's start, the API on a
 * free port, and a tenant whose limits never refuse (benchTenant). The API runs
 * - `in-process`: startProcess in this process, response validation off, log level warn — for benchmarks that reach
 *   into the modules beside it; `poolSize` is its databasePoolSize (default: the configuration's);
 * - `api-process`: as `npm start` runs it, in its own process (startApiProcess) — for benchmarks whose load must not
 *   share the service's event loop; `env`, `nodeOptions` and `cwd` are that process's, `poolSize` this process's pool
 *   (default 2).
 * `role: 'all'` runs the job worker with the API.
 */
export async function startBenchService(
  label: string,
  options: {
    layout: 'in-process' | 'api-process';
    role?: 'api' | 'all';
    poolSize?: number;
    env?: Record<string, string>;
    nodeOptions?: string[];
    cwd?: string;
    databaseUrl?: string;
  },
): Promise<BenchService> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, release: async () => {} }
    : await benchDatabase(label);
  let started: { url: string; db: Db; apiProcess?: ApiProcess; stopApi(): Promise<void>; closePool(): Promise<void> };
  try {
    if (options.layout === 'in-process') {
      const config: Config = {
        ...loadConfig([]),
        port: 0,
        host,
        role: options.role ?? 'api',
        validateResponses: false,
        logLevel: 'warn',
        ...(options.poolSize === undefined ? {} : { databasePoolSize: options.poolSize }),
      };
      const service = await startProcess(config, database.url, createLogger('warn'));
      const stopApi = () => service.close();
      started = { url: service.url!, db: service.deps.db, stopApi, closePool: stopApi };
    } else {
      const env = { ...(options.role ? { ROLE: options.role } : {}), ...options.env };
      const apiProcess = await startApiProcess(database.url, {
        env,
        nodeOptions: options.nodeOptions,
        cwd: options.cwd,
      });
      const handle = openDatabase(database.url, options.poolSize ?? 2);
      started = { url: apiProcess.url, db: handle.db, apiProcess, stopApi: apiProcess.stop, closePool: handle.close };
    }
  } catch (error) {
    await database.release();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  const stopApi = () => (stopping ??= started.stopApi());
  const close = async () => {
    await stopApi();
    await started.closePool();
    await database.release();
  };
  let tenant: BenchTenant;
  try {
    tenant = await benchTenant(started.db);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    ...tenant,
    url: started.url,
    databaseUrl: database.url,
    db: started.db,
    api: benchApi(started.url, tenant.key),
    apiProcess: started.apiProcess,
    stopApi,
    close,
  };
}

/** The line with which the API says it listens; its group is the base URL. */
export const apiReady = /^API: (http:\/\/\S+)\/api\/v1$/m;

/** Times `rounds` sequential HTTP GETs from a child process; returns the latencies in ms. */
export function httpLatencies(url: string, key: string, count: number, warmup: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/bench/analytics-client.ts')], {
      cwd: root,
      env: { ...process.env, BENCH_URL: url, BENCH_KEY: key, BENCH_COUNT: String(count), BENCH_WARMUP: String(warmup) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`client exited with ${code}: ${out}`)),
    );
  });
}

export async function sqlLatencies(
  client: pg.Client,
  count: number,
  queries: string[],
  params: unknown[][],
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    for (let q = 0; q < queries.length; q++) await client.query(queries[q]!, params[q]);
    times.push(performance.now() - start);
  }
  return times;
}

/** Calls the API at `baseUrl` with `key` (JSON in, the envelope out); any non-2xx answer throws with its body. */
export function benchApi(baseUrl: string, key: string) {
  return async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { data: { id: string; status?: string } };
  };
}

/**
 * CPU ticks (user + system) of `roots` and all their descendants, from /proc (Linux); `only` picks the processes
 * whose own time counts. A process that has exited (an autovacuum worker) took its time with it, which made a
 * round's figure fall, once below zero: what each process of the tree has reaped of its children (`cutime` +
 * `cstime`) counts too, whatever `only` says.
 */
export function cpuTicks(roots: number[], only: (pid: number) => boolean = () => true): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  const reapedTicks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
      reapedTicks.set(Number(entry), Number(fields[13]) + Number(fields[14]));
    } catch {
      // exited meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let current: number | undefined = pid; current && current > 1; current = parents.get(current))
      if (roots.includes(current)) return true;
    return false;
  };
  let total = 0;
  for (const [pid, value] of ticks) {
    if (!inTree(pid)) continue;
    if (only(pid)) total += value;
    total += reapedTicks.get(pid) ?? 0;
  }
  return total;
}
export const tickMicros = 10_000; // USER_HZ is 100 on Linux
