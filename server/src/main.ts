/**
 * `npm start`: the API and the job worker in one process (or one of them: `--role api|worker`, or ROLE).
 * Without DATABASE_URL an embedded PostgreSQL is started under DATA_DIR and stopped on exit.
 */
import { bootstrapDemoOrganization } from './bootstrap.js';
import { loadConfig } from './config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { ensureDocsBuilt } from './http/docs.js';
import { createLogger } from './logger.js';
import { startService } from './service.js';

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

let embedded: EmbeddedPostgres | undefined;
let databaseUrl = config.databaseUrl;
if (!databaseUrl) {
  log.info({ dataDir: config.dataDir, port: config.embeddedPostgresPort }, 'DATABASE_URL is not set: starting an embedded PostgreSQL');
  embedded = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    port: config.embeddedPostgresPort,
    onLog: (line) => log.debug({ postgres: line.trim() }, 'embedded postgres'),
  });
  databaseUrl = embedded.url;
}

const service = await startService(config, databaseUrl, log).catch(async (error: unknown) => {
  log.fatal({ err: error }, 'start-up failed');
  await embedded?.stop();
  process.exit(1);
});

if (service.url) {
  const demo = await bootstrapDemoOrganization(service.services.db);
  if (demo) {
    // Printed once, on purpose, to stdout and not to the log: these are the only copies of the keys.
    console.log(`Demo organization ${demo.organizationId} (plan PRO) created.`);
    console.log(`LIVE key: ${demo.liveKey}`);
    console.log(`TEST key: ${demo.testKey}`);
  }
  const publicUrl = config.publicBaseUrl ?? service.url;
  // Built in the background: start-up does not wait for it, and /docs waits only if it is still running.
  void ensureDocsBuilt(log).catch((error: unknown) => log.warn({ err: error }, 'could not build the docs page'));
  console.log(`API: ${publicUrl}/api/v1`);
  console.log(`Docs: ${publicUrl}/docs`);
}
if (config.role !== 'api') console.log('Worker: processing background jobs');
log.info({ role: config.role, url: service.url }, 'ready');

// Start-up is over: a signal that arrived meanwhile is acted on now.
started();
