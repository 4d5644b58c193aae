/**
 * `npm start`: the API and the job worker in one process (or one of them: `--role api|worker`, or ROLE).
 * Without DATABASE_URL an embedded PostgreSQL is started under DATA_DIR and stopped on exit.
 *
 * API_PROCESSES=n (n > 1) uses the machine's cores: this process forks n API processes with node:cluster (they
 * share the port; the primary hands connections out round-robin) and itself runs only the job worker (unless
 * the role is `api`). Start-up output is printed once, by this process, when every API process is listening.
 */
import cluster from 'node:cluster';
import { bootstrapDemoOrganization } from './bootstrap.js';
import { databaseUnavailable } from './db/availability.js';
import { loadConfig } from './config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { ensureDocsBuilt } from './http/docs.js';
import { createLogger } from './logger.js';
import { startProcess, type RunningProcess } from './start.js';
import { openDatabase, type Db } from './db/database.js';

const config = loadConfig();
const log = createLogger(config.logLevel);

// Signals are handled from the first moment: one that arrives during start-up waits for it to finish, then
// drains like any other (an orchestrator may stop a process that is still starting).
let started: () => void = () => {};
const startUp = new Promise<void>((resolve) => (started = resolve));
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    void (async () => {
      try {
        await startUp;
        await apiWorkers?.stop();
        await service.close();
        await embedded?.stop();
        log.info('stopped');
        process.exit(0);
      } catch (error) {
        log.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      }
    })();
  });
}

// A promise of a library's that nobody awaits (pg-boss records a job's completion that way) and that fails because
// the database is away must not end the process: what it did not record is taken up again (its job expires and
// is retried, or was run again). Anything else ends the process, as Node does by default.
process.on('unhandledRejection', (reason) => {
  if (databaseUnavailable(reason)) {
    log.warn({ cause: String((reason as Error)?.message) }, 'a database write in the background failed; it is retried');
    return;
  }
  log.fatal({ err: reason }, 'unhandled rejection');
  process.exit(1);
});

let embedded: EmbeddedPostgres | undefined;
let databaseUrl = config.databaseUrl;
if (!databaseUrl) {
  log.info(
    { dataDir: config.dataDir, port: config.embeddedPostgresPort },
    'DATABASE_URL is not set: starting an embedded PostgreSQL',
  );
  embedded = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    port: config.embeddedPostgresPort,
    onLog: (line) => log.debug({ postgres: line.trim() }, 'embedded postgres'),
  });
  databaseUrl = embedded.url;
}

// API processes forked by a primary (API_PROCESSES > 1) serve the API only and report their address.
const forked = cluster.isWorker;
const apiWorkers =
  !forked && config.apiProcesses > 1 && config.role !== 'worker'
    ? await forkApiProcesses(config.apiProcesses, databaseUrl)
    : undefined;
// SIGHUP rolls the API processes, one at a time, without refusing a request (README, "Operating").
if (apiWorkers) process.on('SIGHUP', () => void apiWorkers.roll());
const ownConfig = forked
  ? { ...config, role: 'api' as const }
  : apiWorkers
    ? { ...config, role: 'worker' as const }
    : config;

// With API processes and role `api`, the primary only supervises (and bootstraps): no worker of its own.
const service: Pick<RunningProcess, 'url' | 'close'> & { deps: { db: Db } } =
  apiWorkers && config.role === 'api'
    ? supervisorOnly(databaseUrl)
    : await startProcess(ownConfig, databaseUrl, log).catch(async (error: unknown) => {
        log.fatal({ err: error }, 'start-up failed');
        await embedded?.stop();
        process.exit(1);
      });

if (forked) {
  process.send?.({ url: service.url });
} else if (service.url || apiWorkers) {
  const demo = await bootstrapDemoOrganization(service.deps.db);
  if (demo) {
    // Printed once, on purpose, to stdout and not to the log: these are the only copies of the keys.
    console.log(`Demo organization ${demo.organizationId} (plan PRO) created.`);
    console.log(`LIVE key: ${demo.liveKey}`);
    console.log(`TEST key: ${demo.testKey}`);
  }
  const publicUrl = config.publicBaseUrl ?? apiWorkers?.url ?? service.url;
  // Built in the background: start-up does not wait for it, and /docs waits only if it is still running.
  void ensureDocsBuilt(log).catch((error: unknown) => log.warn({ err: error }, 'could not build the docs page'));
  console.log(`API: ${publicUrl}/api/v1`);
  console.log(`Docs: ${publicUrl}/docs`);
}
if (!forked && config.role !== 'api') console.log('Worker: processing background jobs');
log.info({ role: config.role, url: service.url }, 'ready');

// Start-up is over: a signal that arrived meanwhile is acted on now.
started();

/**
 * Forks `count` API processes and waits until each listens. One that exits is replaced, so the port keeps its
 * capacity; `roll` replaces them one at a time (SIGHUP: a new one listens before an old one drains), `stop` drains
 * them all (SIGTERM) and waits.
 */
async function forkApiProcesses(
  count: number,
  url: string,
): Promise<{ url: string; roll(): Promise<void>; stop(): Promise<void> }> {
  const fork = () => cluster.fork({ DATABASE_URL: url, API_PROCESSES: '1', ROLE: 'api' });
  const listening = (worker: ReturnType<typeof fork>) =>
    new Promise<string>((resolve, reject) => {
      worker.once('message', (message: { url?: string }) =>
        message.url ? resolve(message.url) : reject(new Error('an API process did not start')),
      );
      worker.once('exit', (code) => reject(new Error(`an API process exited during start-up (${code})`)));
    });
  const urls = await Promise.all(Array.from({ length: count }, () => listening(fork())));
  let stopping = false;
  // Processes `roll` is replacing: their exit is planned, their successor already listens.
  const retiring = new Set<number>();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping || retiring.delete(worker.id)) return;
    // Exit code 0 is a drain an operator asked for (SIGTERM to that process); anything else is a crash.
    if (code === 0) log.info({ pid: worker.process.pid }, 'an API process stopped; starting another');
    else log.error({ pid: worker.process.pid, code, signal }, 'an API process exited; starting another');
    fork();
  });
  const alive = () => Object.values(cluster.workers ?? {}).filter((worker) => worker && !worker.isDead());
  const drained = (worker: NonNullable<ReturnType<typeof alive>[number]>) =>
    new Promise<void>((resolve) => (worker.once('exit', () => resolve()), worker.process.kill('SIGTERM')));
  let rolling: Promise<void> | undefined;
  return {
    url: urls[0]!,
    roll() {
      rolling ??= (async () => {
        try {
          for (const old of alive()) {
            if (stopping) return;
            const fresh = fork();
            await listening(fresh);
            retiring.add(old!.id);
            log.info({ pid: old!.process.pid, successor: fresh.process.pid }, 'rolling: an API process drains');
            await drained(old!);
          }
          log.info('rolling restart done');
        } catch (error) {
          log.error({ err: error }, 'rolling restart stopped');
        } finally {
          rolling = undefined;
        }
      })();
      return rolling;
    },
    async stop() {
      stopping = true;
      await rolling;
      await Promise.all(alive().map((worker) => drained(worker!)));
    },
  };
}

function supervisorOnly(url: string): Pick<RunningProcess, 'url' | 'close'> & { deps: { db: Db } } {
  const database = openDatabase(url, 1);
  return { url: undefined, deps: { db: database.db }, close: () => database.close() };
}
