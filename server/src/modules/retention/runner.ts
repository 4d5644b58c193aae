/**
 * The worker side of a retention run (queue `retention.run`): the environment's policy applied at the run's start
 * instant, in batches.
 *
 * Ownership and crash recovery are job ownership (jobs/owned.ts), as for privacy requests and exports. Each batch is
 * one short transaction that locks the run's row, checks the run is still this attempt's, removes at most BATCH
 * rows through the modules that own them, and adds what it removed to the run's counts: a worker killed mid-batch
 * leaves that batch undone and uncounted, the next attempt plans again from the same instant (what is gone is no
 * longer due) and goes on, so nothing is removed or counted twice. The last transaction counts the held responses,
 * completes the run and writes its audit entry.
 */
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { Dependencies } from '../../dependencies.js';
import { checkAgainLater, runOwned, type Watchdog } from '../../jobs/owned.js';
import { forgetSubjects, forgottenPersonKey } from '../analytics/index.js';
import { recordAudit } from '../audit/index.js';
import { forgetResponsesOfRecipients } from '../distributions/index.js';
import { deleteEventsBefore } from '../events/index.js';
import { eraseExportFiles, expireFilesCompletedBefore, exportsHoldingWhere } from '../exports/index.js';
import {
  countDueResponses,
  dueResponses,
  dueResponsesCondition,
  forgetRespondentOfResponses,
  removeResponses,
} from '../surveys/index.js';
import { deleteFinishedDeliveriesBefore } from '../webhooks/index.js';
import { addResponses } from './counts.js';
import { DEFAULT_POLICY, planOf, type SurveyPlan } from './plan.js';
import { retentionQueue, type RetentionJobData } from './queue.js';
import { beginRun, findRun, findSettings, lockRun, saveCounts, type RunRow } from './repository.js';
import type { RetentionCounts } from './tables.js';

type RunDeps = Pick<Dependencies, 'db' | 'boss' | 'log'>;

/** Rows removed per transaction: each holds its locks for well under a second. */
export const BATCH = 500;

/** A run whose worker died this many times is completed with what it did (its counts say what). */
const MAX_ATTEMPTS = 5;

const check =
  (deps: RunDeps, data: RetentionJobData): Watchdog =>
  (seconds) =>
    retentionQueue.send(deps.boss, deps.db, data, { startAfter: seconds });

/** Another attempt took the run over (this one was presumed dead): this one stops. */
class Superseded extends Error {}

export async function runRetention(deps: RunDeps, data: RetentionJobData): Promise<'busy' | 'finished'> {
  const tenant: Tenant = { organizationId: data.organizationId, environment: data.environment };
  return runOwned(
    deps,
    {
      lock: `retention.run:${data.runId}`,
      async load(conn) {
        const run = await findRun(conn, tenant, data.runId);
        return run?.status === 'running' ? run : undefined;
      },
      maxRuns: {
        limit: MAX_ATTEMPTS,
        count: (run) => run.attempts,
        giveUp: async (conn, run) => {
          await complete(conn, tenant, run, null);
        },
      },
      beginRun: (conn, run) => beginRun(conn, tenant, run.id),
      watchdog: check(deps, data),
    },
    async (conn, run, watchdogId) => {
      try {
        await work(conn, tenant, run);
        const withdrawCheck = watchdogId ? (tx: DbOrTx) => retentionQueue.cancel(deps.boss, tx, watchdogId) : null;
        const removed = await complete(conn, tenant, run, withdrawCheck);
        deps.log.info({ retentionRunId: run.id, attempt: run.attempts, removed }, 'retention run completed');
      } catch (error) {
        if (!(error instanceof Superseded)) throw error;
      }
    },
  );
}

/** One batch: `step` removes what it can and adds it to the counts; whether there is more of the same to do. */
async function batch(
  conn: Db,
  tenant: Tenant,
  run: RunRow,
  step: (tx: DbOrTx, counts: RetentionCounts) => Promise<boolean>,
): Promise<boolean> {
  return conn.transaction().execute(async (tx) => {
    const row = await lockRun(tx, tenant, run.id);
    if (!row || row.status !== 'running' || row.attempts !== run.attempts) throw new Superseded();
    const counts = row.removed;
    const more = await step(tx, counts);
    await saveCounts(tx, tenant, run.id, counts, false);
    return more;
  });
}

async function repeat(conn: Db, tenant: Tenant, run: RunRow, step: Parameters<typeof batch>[3]): Promise<void> {
  while (await batch(conn, tenant, run, step));
}

async function work(conn: Db, tenant: Tenant, run: RunRow): Promise<void> {
  const policy = (await findSettings(conn, tenant)) ?? DEFAULT_POLICY;
  const plan = await planOf(conn, tenant, policy, run.started_at);
  if (plan.heldWhole) return;
  for (const survey of plan.surveys) {
    if (survey.held) continue;
    // Files first: which ones hold the due responses is decided on the responses as they still are.
    await batch(conn, tenant, run, async (tx, counts) => {
      const files = await exportsHoldingWhere(tx, tenant, [survey.surveyId], dueResponsesCondition(tenant, survey.due));
      await eraseExportFiles(
        tx,
        tenant,
        files.map((f) => f.id),
        run.id,
      );
      counts.exportFiles += files.length;
      return false;
    });
    await repeat(conn, tenant, run, (tx, counts) => removeDueResponses(tx, tenant, survey, counts));
  }
  await repeat(conn, tenant, run, async (tx, counts) => {
    const n = await expireFilesCompletedBefore(tx, tenant, plan.exportFilesBefore, plan.heldSurveyIds, BATCH);
    counts.exportFiles += n;
    return n === BATCH;
  });
  // Deliveries before events: an event's deletion takes its deliveries along, which are not counted as deliveries.
  await repeat(conn, tenant, run, async (tx, counts) => {
    const n = await deleteFinishedDeliveriesBefore(tx, tenant, plan.deliveriesBefore, BATCH);
    counts.webhookDeliveries += n;
    return n === BATCH;
  });
  await repeat(conn, tenant, run, async (tx, counts) => {
    const n = await deleteEventsBefore(tx, tenant, plan.eventsBefore, BATCH);
    counts.events += n;
    return n === BATCH;
  });
}

/**
 * Deletes a batch of the survey's due responses through the responses' one deletion, or anonymizes them: the
 * response, its analytics copy and its recipient forget the respondent, as an erasure of identity does.
 */
async function removeDueResponses(
  tx: DbOrTx,
  tenant: Tenant,
  survey: SurveyPlan,
  counts: RetentionCounts,
): Promise<boolean> {
  const due = await dueResponses(tx, tenant, survey.due, BATCH);
  const ids = due.map((r) => r.id);
  if (survey.action === 'delete') {
    addResponses(counts, survey.surveyId, 'deletedResponses', await removeResponses(tx, tenant, survey.surveyId, ids));
    return ids.length === BATCH;
  }
  const anonymized = await forgetRespondentOfResponses(tx, tenant, survey.surveyId, ids);
  // A key per person: their responses (all in this batch) go on counting as one respondent.
  const keys = new Map<string | null, string>();
  const subjects = due.map((r) => {
    if (!keys.has(r.respondent_external_id)) keys.set(r.respondent_external_id, forgottenPersonKey());
    return { responseId: r.id, key: keys.get(r.respondent_external_id)! };
  });
  await forgetSubjects(tx, tenant, survey.surveyId, subjects);
  await forgetResponsesOfRecipients(tx, tenant, survey.surveyId, ids);
  addResponses(counts, survey.surveyId, 'anonymizedResponses', anonymized);
  return keys.size === BATCH;
}

/**
 * Completes the run: counts the responses legal holds kept, saves the counts and writes the audit entry, in one
 * transaction (with `alsoInTransaction`, the withdrawal of its pending check).
 */
async function complete(
  conn: Db,
  tenant: Tenant,
  run: RunRow,
  alsoInTransaction: ((tx: DbOrTx) => Promise<void>) | null,
): Promise<RetentionCounts | undefined> {
  return conn.transaction().execute(async (tx) => {
    const row = await lockRun(tx, tenant, run.id);
    if (!row || row.status !== 'running') return undefined;
    const counts = row.removed;
    const policy = (await findSettings(tx, tenant)) ?? DEFAULT_POLICY;
    const plan = await planOf(tx, tenant, policy, run.started_at);
    for (const survey of plan.surveys)
      if (survey.held)
        addResponses(counts, survey.surveyId, 'heldResponses', await countDueResponses(tx, tenant, survey.due));
    await saveCounts(tx, tenant, run.id, counts, true);
    await recordAudit(
      tx,
      { tenant, actor: 'system', requestId: null, clientAddress: null },
      { action: 'retention.run', target: { type: 'retention_run', id: run.id } },
    );
    await alsoInTransaction?.(tx);
    return counts;
  });
}

/** The dead-man's switch: while the run's owner is alive, look again later. */
export async function checkLater(deps: RunDeps, data: RetentionJobData): Promise<void> {
  const run = await findRun(
    deps.db,
    { organizationId: data.organizationId, environment: data.environment },
    data.runId,
  );
  if (run?.status === 'running') await checkAgainLater(check(deps, data));
}
