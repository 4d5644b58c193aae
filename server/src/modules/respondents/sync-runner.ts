/**
 * The worker side of a sync job.
 *
 * Ownership (jobs/owned.ts): the worker that runs a job holds a session advisory lock on it, on the connection
 * that does the job's writes. PostgreSQL drops the lock the moment that process dies (even on SIGKILL), so "lock
 * free but job unfinished" means "its worker is gone": whoever receives the job's queue entry then resumes it.
 * Dead-man's switch: before working, the owner enqueues a check of the same job a few seconds ahead; a check that
 * finds the lock held re-enqueues itself, one that finds it free resumes the job, one that finds the job finished
 * stops. So a crashed job resumes within seconds of a worker being available, without waiting for pg-boss's
 * expiration (which also retries it, harmlessly).
 *
 * Exactly once in effect: `upsert` and `append` commit each batch together with its done flag and its counts, so
 * a resumed job writes exactly the batches not done yet. `replace` runs in one transaction (readers see the old
 * set or the new one), so a resumed replace starts over from nothing.
 */
import { sql } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import { tenantOf, tenantOfRow, type Tenant } from '../../db/tenant.js';
import type { Dependencies } from '../../dependencies.js';
import { checkAgainLater, runOwned, type Watchdog } from '../../jobs/owned.js';
import {
  lockManagerEdges,
  managerLoops,
  ParallelManagerEdges,
  type ManagerLoopError,
  type ManagerEdgesTurn,
} from './hierarchy.js';
import { checkRecord, type RespondentRow } from './records.js';
import {
  analyzeIfTenantUnderestimated,
  existingHashes,
  removeRespondentsNotKept,
  writeRespondents,
} from './repository.js';
import {
  deleteBatches,
  findSyncJob,
  finishSyncJob,
  getSyncJobById,
  lockTenantSyncs,
  markAttempt,
  promoteNextSync,
  readBatch,
  saveCounts,
  batchesToDo,
  commitBatch,
  type SyncCounts,
  type SyncJobRecord,
} from './sync-repository.js';
import { syncQueue, type SyncJobData } from './sync-queue.js';
import { enqueueSync, SYNC_BATCH_SIZE } from './sync-service.js';
import { recordEvent } from '../events/index.js';
import { toSyncJob } from './service.js';
import type { SyncRecordError } from './tables.js';

/** A job whose worker died this many times is failed instead of taken up again. */
const MAX_ATTEMPTS = 5;
const MAX_REPORTED_ERRORS = 100;
/** Parallel write transactions of an upsert or append. */
const WRITERS = 2;
/** Rows a job must have created before it checks the planner's estimate for its tenant (once a job). */
const STATISTICS_CHECK_AFTER = 2_000;

type RunDeps = Pick<Dependencies, 'db' | 'boss' | 'log'>;

interface BatchOutcome {
  rows: RespondentRow[];
  /** Each row's index in the request, for the error of a row the writer refuses. */
  indexes: number[];
  superseded: number;
  errors: SyncRecordError[];
}

/**
 * Splits a stored batch into rows to write and per-record errors. A record set aside when the request was read
 * (`unsendable`, by its index in the request) is its stored error; every other record is checked here.
 */
function classify(
  records: unknown[],
  superseded: number[],
  unsendable: readonly SyncRecordError[],
  offset: number,
): BatchOutcome {
  const skip = new Set(superseded);
  const unsendableErrors = new Map(unsendable.map((error) => [error.index, error]));
  const rows: RespondentRow[] = [];
  const indexes: number[] = [];
  const errors: SyncRecordError[] = [];
  records.forEach((record, position) => {
    if (skip.has(position)) return;
    const unsendableError = unsendableErrors.get(offset + position);
    if (unsendableError) {
      errors.push(unsendableError);
      return;
    }
    const checked = checkRecord(record, offset + position);
    if (checked.ok) {
      rows.push(checked.row);
      indexes.push(offset + position);
    } else errors.push(checked.error);
  });
  return { rows, indexes, superseded: skip.size, errors };
}

/**
 * What writing the rows did — or, in a dry run, would do. A row the writer refuses (it would close a loop of
 * managers) becomes that record's error in `outcome.errors` and is counted there, not as written or skipped.
 */
async function apply(
  db: DbOrTx,
  tenant: Tenant,
  job: SyncJobRecord,
  outcome: BatchOutcome,
  turn?: ManagerEdgesTurn,
): Promise<{ created: number; updated: number }> {
  const { rows } = outcome;
  const refusedOf = (refused: Iterable<ManagerLoopError>) => {
    const indexOf = new Map(rows.map((row, i) => [row.externalId, outcome.indexes[i]!]));
    const refusedIds = new Set<string>();
    for (const error of refused) {
      refusedIds.add(error.externalId);
      outcome.errors.push({
        index: indexOf.get(error.externalId)!,
        externalId: error.externalId,
        message: error.message,
        code: 'manager_cycle',
        path: '/managerId',
      });
    }
    outcome.rows = rows.filter((row) => !refusedIds.has(row.externalId));
  };
  if (!job.dry_run) {
    const written = await writeRespondents(db, tenant, rows, job.mode, 'report', turn);
    if (written.refused.length > 0) refusedOf(written.refused);
    return { created: written.created, updated: written.updated };
  }
  const loops = await managerLoops(db, tenant, rows, { appendOnly: job.mode === 'append', lock: false, turn });
  if (loops.size > 0) refusedOf(loops.values());
  const existing = await existingHashes(
    db,
    tenant,
    outcome.rows.map((r) => r.externalId),
  );
  let created = 0;
  let updated = 0;
  for (const row of outcome.rows) {
    const hash = existing.get(row.externalId);
    if (hash === undefined) created++;
    else if (job.mode !== 'append' && hash !== row.contentHash) updated++;
  }
  return { created, updated };
}

function emptyCounts(): SyncCounts {
  return {
    processedRecords: 0,
    processedBatches: 0,
    progress: 0,
    created: 0,
    updated: 0,
    skipped: 0,
    errorCount: 0,
    deleted: 0,
    errors: [],
  };
}

function tally(
  counts: SyncCounts,
  job: SyncJobRecord,
  batchSize: number,
  outcome: BatchOutcome,
  written: { created: number; updated: number },
): void {
  counts.processedBatches += 1;
  counts.processedRecords += batchSize;
  // 100 only once the job is completed.
  counts.progress = Math.min(99, Math.floor((counts.processedRecords * 100) / job.total_records));
  counts.created += written.created;
  counts.updated += written.updated;
  counts.skipped += outcome.superseded + (outcome.rows.length - written.created - written.updated);
  counts.errorCount += outcome.errors.length;
  for (const error of outcome.errors) {
    if (counts.errors.length >= MAX_REPORTED_ERRORS) break;
    counts.errors.push(error);
  }
}

const batchCountOf = (job: SyncJobRecord) => Math.ceil(job.total_records / SYNC_BATCH_SIZE);

/** The end of every job, in the caller's transaction: final state, stored records dropped, next sync enqueued. */
async function finish(
  tx: DbOrTx,
  deps: RunDeps,
  job: SyncJobRecord,
  counts: SyncCounts | undefined,
  outcome: { status: 'completed' | 'failed'; failureReason: string | null },
  watchdogId?: string | null,
): Promise<void> {
  const tenant = tenantOfRow(job);
  await lockTenantSyncs(tx, tenant);
  // The owner's pending check has nothing left to check.
  if (watchdogId) await syncQueue.cancel(deps.boss, tx, watchdogId);
  if (counts) await saveCounts(tx, tenant, job.id, counts);
  await finishSyncJob(tx, tenant, job.id, outcome);
  // The job's end and its event commit together (events/record.ts).
  const finished = await findSyncJob(tx, tenant, job.id);
  if (finished)
    await recordEvent(
      tx,
      tenant,
      outcome.status === 'completed' ? 'respondents.sync.completed' : 'respondents.sync.failed',
      toSyncJob(finished),
    );
  await deleteBatches(tx, tenant, job.id);
  const next = await promoteNextSync(tx, tenant);
  if (next) await enqueueSync(deps.boss, tx, tenant, next);
}

interface PreparedBatch {
  batchNo: number;
  size: number;
  outcome: BatchOutcome;
}

/**
 * Reads and validates the given batches in order, one ahead of the writers: the next batch's parsing and
 * validation (CPU in this process) overlap the writes (CPU in PostgreSQL). Safe to pull from concurrently.
 */
function batchesOf(deps: RunDeps, job: SyncJobRecord, batchNos: readonly number[]): AsyncGenerator<PreparedBatch> {
  const prepare = async (batchNo: number): Promise<PreparedBatch> => {
    const batch = await readBatch(deps.db, tenantOfRow(job), job.id, batchNo);
    return {
      batchNo,
      size: batch.records.length,
      outcome: classify(batch.records, batch.superseded, batch.unsendable, batchNo * SYNC_BATCH_SIZE),
    };
  };
  return (async function* () {
    let next = batchNos.length > 0 ? prepare(batchNos[0]!) : undefined;
    for (let i = 0; next; i++) {
      const current = next;
      next = i + 1 < batchNos.length ? prepare(batchNos[i + 1]!) : undefined;
      // Reported when awaited in its turn; until then it must not count as unhandled.
      next?.catch(() => undefined);
      yield await current;
    }
  })();
}

/**
 * upsert and append: batches hold distinct externalIds, so they are written by WRITERS transactions in parallel
 * (PostgreSQL then uses more than one core); each commits its rows, its done flag and its counts together.
 */
async function runIncremental(conn: Db, deps: RunDeps, job: SyncJobRecord, watchdogId: string | null): Promise<void> {
  const tenant = tenantOfRow(job);
  const batches = batchesOf(deps, job, await batchesToDo(conn, tenantOfRow(job), job.id));
  let created = 0;
  let statisticsChecked = job.dry_run;
  const edges = new ParallelManagerEdges(job.dry_run);
  const writeAll = async (db: Db) => {
    for await (const { batchNo, size, outcome } of batches) {
      // Taken as the batch is: in batch order.
      const turn = edges.nextTurn();
      let committed = false;
      try {
        const createdHere = await db.transaction().execute(async (tx) => {
          // A commit lost with a database crash loses its done flag and counts with it: resuming stays exact.
          await sql`set local synchronous_commit = off`.execute(tx);
          const written = await apply(tx, tenant, job, outcome, turn);
          await turn.beforeCommit();
          await commitBatch(
            tx,
            tenant,
            job.id,
            batchNo,
            {
              records: size,
              created: written.created,
              updated: written.updated,
              skipped: outcome.superseded + (outcome.rows.length - written.created - written.updated),
              errorCount: outcome.errors.length,
              errors: outcome.errors,
            },
            MAX_REPORTED_ERRORS,
          );
          return written.created;
        });
        committed = true;
        created += createdHere;
      } finally {
        turn.end(committed);
      }
      if (!statisticsChecked && created >= STATISTICS_CHECK_AFTER) {
        statisticsChecked = true;
        await analyzeIfTenantUnderestimated(db, tenant, created);
      }
    }
  };
  const helpers = Array.from({ length: WRITERS - 1 }, () => deps.db.connection().execute(writeAll));
  const results = await Promise.allSettled([writeAll(conn), ...helpers]);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  await conn
    .transaction()
    .execute((tx) => finish(tx, deps, job, undefined, { status: 'completed', failureReason: null }, watchdogId));
}

/**
 * replace: one transaction. While it is open it holds row locks that API requests wait on (a PUT or DELETE of a
 * respondent it has written), so everything it needs besides its own connection — reading the next batch,
 * publishing progress — goes through a connection reserved before the transaction starts, never the shared
 * pool: with every pool connection taken by requests waiting for those locks, it would wait for the pool
 * forever, and they for it (no database deadlock to detect, just a hang).
 */
async function runAtomic(conn: Db, deps: RunDeps, job: SyncJobRecord, watchdogId: string | null): Promise<void> {
  const tenant = tenantOfRow(job);
  const counts = emptyCounts();
  let statisticsChecked = job.dry_run;
  await deps.db.connection().execute((side) =>
    conn.transaction().execute(async (tx) => {
      // Before any row lock: a PUT that holds this lock may wait for a row this transaction wrote.
      if (!job.dry_run) await lockManagerEdges(tx, tenant);
      const kept: string[] = [];
      let valid = 0;
      const all = Array.from({ length: batchCountOf(job) }, (_, i) => i);
      for await (const { size, outcome } of batchesOf({ ...deps, db: side }, job, all)) {
        const written = await apply(tx, tenant, job, outcome);
        for (const row of outcome.rows) kept.push(row.externalId);
        valid += outcome.rows.length;
        tally(counts, job, size, outcome, written);
        if (!statisticsChecked && counts.created >= STATISTICS_CHECK_AFTER) {
          statisticsChecked = true;
          await analyzeIfTenantUnderestimated(tx, tenant, counts.created);
        }
        // Progress (on the side connection) moves while the writes stay invisible until the one commit.
        await saveCounts(side, tenant, job.id, { ...counts, processedBatches: 0 });
      }
      if (valid === 0) {
        // Nothing was written (no valid record): failing here deletes nothing.
        return finish(
          tx,
          deps,
          job,
          counts,
          {
            status: 'failed',
            failureReason: 'No valid record: a replace sync needs at least one valid record; nothing was deleted.',
          },
          watchdogId,
        );
      }
      counts.deleted = await removeRespondentsNotKept(tx, tenant, kept, job.dry_run);
      counts.processedBatches = batchCountOf(job);
      return finish(tx, deps, job, counts, { status: 'completed', failureReason: null }, watchdogId);
    }),
  );
}

/** A check of the job (the dead-man's switch), behind new and promoted jobs. */
const check =
  (deps: RunDeps, tenant: Tenant, syncJobId: string): Watchdog =>
  (seconds) =>
    enqueueSync(deps.boss, deps.db, tenant, syncJobId, seconds);

/**
 * The job's tenant: the queue entry's, or, for an entry queued before entries carried it, the job's own (found
 * by its id across tenants, once). Undefined when the job is gone.
 */
async function tenantOfJob(db: Db, data: SyncJobData): Promise<Tenant | undefined> {
  if (data.organizationId && data.environment) return tenantOf(data as Tenant);
  const job = await getSyncJobById(db, data.syncJobId);
  return job ? tenantOfRow(job) : undefined;
}

/**
 * Runs (or resumes) one sync job if no live worker owns it (jobs/owned.ts). `busy`: another live worker holds it;
 * `finished`: nothing (more) to do here.
 */
export async function runSyncJob(deps: RunDeps, data: SyncJobData): Promise<'busy' | 'finished'> {
  const { syncJobId } = data;
  const tenant = await tenantOfJob(deps.db, data);
  if (!tenant) return 'finished';
  return runOwned(
    deps,
    {
      lock: `respondents.sync.job:${syncJobId}`,
      async load(conn) {
        const found = await findSyncJob(conn, tenant, syncJobId);
        // pending: not its turn (it is enqueued when promoted); completed/failed: a late duplicate delivery.
        return found?.status === 'processing' ? found : undefined;
      },
      maxRuns: {
        limit: MAX_ATTEMPTS,
        count: (found) => found.attempts,
        async giveUp(conn, found) {
          const counts =
            found.mode === 'replace' ? { ...emptyCounts(), processedRecords: found.total_records } : undefined;
          await conn.transaction().execute((tx) =>
            finish(tx, deps, found, counts, {
              status: 'failed',
              failureReason: `The sync stopped after ${MAX_ATTEMPTS} interrupted attempts.${found.mode === 'replace' ? ' Nothing was applied.' : ' The counted records were applied.'}`,
            }),
          );
        },
      },
      beginRun: (conn) => markAttempt(conn, tenant, syncJobId),
      watchdog: check(deps, tenant, syncJobId),
    },
    async (conn, job, watchdogId) => {
      if (job.mode === 'replace') await runAtomic(conn, deps, job, watchdogId);
      else await runIncremental(conn, deps, job, watchdogId);
    },
  );
}

/** The dead-man's switch: while the job's owner is alive, look again later. */
export async function checkLater(deps: RunDeps, data: SyncJobData): Promise<void> {
  const tenant = await tenantOfJob(deps.db, data);
  const job = tenant && (await findSyncJob(deps.db, tenant, data.syncJobId));
  if (tenant && job?.status === 'processing') await checkAgainLater(check(deps, tenant, data.syncJobId));
}
