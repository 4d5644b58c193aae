/**
 * The worker side of a privacy request (queue `privacy.request`).
 *
 * Ownership and crash recovery are job ownership (jobs/owned.ts): the worker that runs a request holds a session
 * advisory lock on it, which PostgreSQL drops the moment that process dies, even on SIGKILL; a delayed check job
 * that finds the request unfinished and its lock free runs it again within seconds.
 *
 * Once in effect: a run does the whole request in ONE transaction — find what the service holds about the person,
 * count it, make the access file or apply the erasure, complete the request (forgetting its subject's identifier)
 * and record `privacy_request.completed` — with the request's row locked from the start and the completion
 * conditional on the run still being the current one. A worker killed mid-run leaves nothing done (its transaction
 * is rolled back with its session), the next run starts from the same data, and a late duplicate finds the request
 * completed and does nothing. A person's data is small (a few hundred rows even for a long-serving employee), so
 * one transaction holds its locks for well under a second.
 */
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { Dependencies } from '../../dependencies.js';
import { checkAgainLater, runOwned, type Watchdog } from '../../jobs/owned.js';
import { recordEvent } from '../events/index.js';
import { accessFileOf, type AskedIn } from './access-file.js';
import { erase } from './erase.js';
import { findHoldings, inventoryOf } from './holdings.js';
import { privacyQueue, type PrivacyJobData } from './queue.js';
import {
  beginRun,
  completeRequest,
  failRequest,
  findRequest,
  insertFile,
  lockRequest,
  surveyVersions,
  type RequestRow,
} from './repository.js';
import { toPrivacyRequest } from './service.js';

type RunDeps = Pick<Dependencies, 'db' | 'boss' | 'log'>;

/** A request whose worker died this many times fails instead of starting again. */
const MAX_ATTEMPTS = 5;

/** A check of the request (the dead-man's switch), behind new requests (priority 0). */
const check =
  (deps: RunDeps, data: PrivacyJobData): Watchdog =>
  (seconds) =>
    privacyQueue.send(deps.boss, deps.db, data, { startAfter: seconds, priority: 0 });

/** Fails the request (its identifier forgotten) and records the event, as a completion does. */
async function fail(conn: Db, tenant: Tenant, id: string, reason: string): Promise<void> {
  await conn.transaction().execute(async (tx) => {
    const failed = await failRequest(tx, tenant, id, reason);
    if (failed) await recordEvent(tx, tenant, 'privacy_request.completed', toPrivacyRequest(failed));
  });
}

/**
 * Runs (or resumes) one request if no live worker owns it. `busy`: a live worker holds it; `finished`: nothing
 * (more) to do here.
 */
export async function runPrivacyRequest(deps: RunDeps, data: PrivacyJobData): Promise<'busy' | 'finished'> {
  const tenant: Tenant = { organizationId: data.organizationId, environment: data.environment };
  return runOwned(
    deps,
    {
      lock: `privacy.request:${data.requestId}`,
      async load(conn) {
        const found = await findRequest(conn, tenant, data.requestId);
        return found && (found.status === 'pending' || found.status === 'processing') ? found : undefined;
      },
      maxRuns: {
        limit: MAX_ATTEMPTS,
        count: (found) => found.attempts,
        giveUp: (conn, found) =>
          fail(
            conn,
            tenant,
            found.id,
            `The request stopped after ${MAX_ATTEMPTS} interrupted runs; nothing was changed.`,
          ),
      },
      beginRun: (conn, found) => beginRun(conn, tenant, found.id),
      watchdog: check(deps, data),
    },
    async (conn, run, watchdogId) => {
      const completed = await conn.transaction().execute(async (tx) => {
        const row = await lockRequest(tx, tenant, run.id);
        // A newer run took over (this one was presumed dead), or it finished meanwhile: leave it to that run.
        if (!row || row.status !== 'processing' || row.attempts !== run.attempts || row.subject_value === null)
          return undefined;
        const done = await carryOut(tx, tenant, row);
        if (!done) return undefined;
        if (watchdogId) await privacyQueue.cancel(deps.boss, tx, watchdogId);
        await recordEvent(tx, tenant, 'privacy_request.completed', toPrivacyRequest(done));
        return done;
      });
      // Ids and counts only: never the subject.
      if (completed)
        deps.log.info(
          { privacyRequestId: completed.id, type: completed.type, dryRun: completed.dry_run, attempt: run.attempts },
          'privacy request completed',
        );
    },
  );
}

/** The request's work, in its transaction; the completed row. */
async function carryOut(tx: DbOrTx, tenant: Tenant, row: RequestRow): Promise<RequestRow | undefined> {
  const subject = { kind: row.subject_kind, value: row.subject_value! };
  const holdings = await findHoldings(tx, tenant, { id: row.id, subject });
  const inventory = inventoryOf(holdings);
  let fileSize: number | null = null;
  if (row.type === 'access' && !row.dry_run) {
    const versions = await surveyVersions(
      tx,
      tenant,
      holdings.responses.map((r) => ({ surveyId: r.survey_id, version: r.survey_version ?? 1 })),
    );
    const kept = new Map(versions.map((v) => [`${v.survey_id}:${v.version}`, v]));
    const askedIn = (surveyId: string, version: number): AskedIn => {
      const exact = kept.get(`${surveyId}:${version}`);
      const survey = holdings.surveys.get(surveyId);
      return exact ?? { title: survey?.title ?? '', questions: survey?.questions ?? [] };
    };
    const file = Buffer.from(`${JSON.stringify(accessFileOf(row.id, new Date(), holdings, askedIn), null, 2)}\n`);
    await insertFile(tx, tenant, row.id, file);
    fileSize = file.length;
  }
  if (row.type === 'erasure' && !row.dry_run) await erase(tx, tenant, row.id, holdings, row.scope!);
  return completeRequest(tx, tenant, row.id, row.attempts, {
    inventory,
    webhookRecipients: holdings.webhookRecipients,
    fileSize,
  });
}

/** The dead-man's switch: while the request's owner is alive, look again later. */
export async function checkLater(deps: RunDeps, data: PrivacyJobData): Promise<void> {
  const row = await findRequest(
    deps.db,
    { organizationId: data.organizationId, environment: data.environment },
    data.requestId,
  );
  if (row && (row.status === 'processing' || row.status === 'pending')) await checkAgainLater(check(deps, data));
}
