/**
 * Starts what this process runs — the API, the job worker, or both — on one PostgreSQL, and stops it
 * gracefully: stop accepting, drain in-flight requests and jobs, close pools.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { DatabaseAvailability } from './db/availability.js';
import { openDatabase } from './db/database.js';
import { listenerConnection } from './db/listener.js';
import { migrateToLatest } from './db/migrate.js';
import { createApp, type AppParts } from './http/app.js';
import { contractPath } from './http/contract.js';
import type { Dependencies } from './dependencies.js';
import { AuthFailures } from './http/auth-failures.js';
import { InFlightWork } from './http/in-flight.js';
import { ApiKeyAuthority, KeyCache } from './modules/api-keys/index.js';
import { RateLimits } from './http/rate-limit.js';
import { replyToClientError, requestSizeLimits } from './http/request-size.js';
import { keepConnections } from './http/server-lifecycle.js';
import { jobs } from './job-registry.js';
import { startBoss, startWorkers } from './jobs/boss.js';
import type { Logger } from './logger.js';
import { handlers, semanticChecks } from './modules/handlers.js';
import { answerPages, kioskPages } from './modules/respondent-pages/index.js';
import { setAsideUnsendableRecords } from './modules/respondents/index.js';
import { scimErrors } from './modules/scim/index.js';
import { WebhookDispatcher } from './modules/webhooks/index.js';

export interface RunningProcess {
  /** Base URL of the API, when this process serves it. */
  url: string | undefined;
  deps: Dependencies;
  close(): Promise<void>;
}

export async function startProcess(config: Config, databaseUrl: string, log: Logger): Promise<RunningProcess> {
  // One account of whether the database is reachable, which every connection of this process reports to.
  const availability = new DatabaseAvailability(log);
  const connection = { availability, connectTimeoutMs: config.databaseConnectTimeoutMs };
  const database = openDatabase(databaseUrl, config.databasePoolSize, connection);
  // Per-request bookkeeping (rate-limit counters, key use) on its own small pool without synchronous commit.
  const counters = openDatabase(databaseUrl, Math.max(2, Math.ceil(config.databasePoolSize / 2)), {
    ...connection,
    synchronousCommit: false,
  });
  // The database may not accept connections yet (started together with the service, or restarting): wait for it
  // rather than exit, logging its absence once.
  await availability.untilReachable(
    () => sql`select 1`.execute(database.db),
    config.databaseReconnectMaxDelayMs,
    () => false,
  );
  await migrateToLatest(database.db);
  const runsWorker = config.role !== 'api';
  const runsApi = config.role !== 'worker';
  const boss = await startBoss(databaseUrl, jobs, { worker: runsWorker, log, availability });
  const deps: Dependencies = {
    config,
    db: database.db,
    pool: database.pool,
    boss,
    log,
    rateLimits: new RateLimits(counters.pool),
    counters: counters.db,
    inFlight: new InFlightWork(),
    contractJson: readFileSync(contractPath, 'utf8'),
    keys: new ApiKeyAuthority(new KeyCache(database.db, listenerConnection(config, availability, databaseUrl), log), {
      counters: counters.db,
      availability,
      log,
    }),
    authFailures: new AuthFailures(config.authFailuresPerMinute),
    availability,
  };
  if (runsApi) await deps.keys.start();

  let server: Server | undefined;
  let connections: ReturnType<typeof keepConnections> | undefined;
  let url: string | undefined;
  if (runsApi) {
    // Request lines and headers up to the larger size a long URL needs, so that it gets 414 from the application;
    // beyond it, 431 in the envelope instead of Node's bare one (http/request-size.ts).
    server = createServer({ maxHeaderSize: requestSizeLimits.headers }, createApp(deps, appParts(deps)));
    server.on('clientError', replyToClientError);
    connections = keepConnections(server, config.keepAliveTimeoutMs);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${address.port}`;
  }
  const stopWorkers = runsWorker ? await startWorkers(boss, jobs, deps, databaseUrl) : async () => {};
  // Webhook deliveries: a dispatcher per worker process over the deliveries table (modules/webhooks/dispatcher.ts).
  const dispatcher = runsWorker ? new WebhookDispatcher(deps, databaseUrl) : undefined;
  await dispatcher?.start();

  let closing: Promise<void> | undefined;
  return {
    url,
    deps,
    close() {
      closing ??= (async () => {
        if (connections) {
          await connections.drain(config.shutdownGraceMs);
          // Handlers of clients that hung up may still be running: let them finish before the pools close.
          await deps.inFlight.settled(config.shutdownGraceMs);
        }
        await deps.keys.close();
        await stopWorkers();
        await dispatcher?.stop();
        // graceful: wait for active jobs to finish (up to the grace period) before closing.
        await boss.stop({ graceful: true, wait: true, timeout: config.shutdownGraceMs });
        await counters.close();
        await database.close();
      })();
      return closing;
    },
  };
}

/** What the modules add to the HTTP application (http/app.ts knows none of them by name). */
function appParts(deps: Dependencies): AppParts {
  return {
    handlers,
    semanticChecks,
    // The respondents' answer, unsubscribe and kiosk pages.
    pages: [answerPages(deps), kioskPages(deps)],
    // Under /scim/v2 every refusal is a SCIM error (RFC 7644 §3.12), not the envelope.
    errorReplies: [scimErrors(deps.log)],
    // A sync's records are each validated by the respondents module: a bad one is that record's error.
    recordArrays: { startRespondentSync: { field: 'respondents', setAside: setAsideUnsendableRecords } },
  };
}
