/**
 * Accepting a sync: the job row, the request's records (one stored row per batch) and the queue entry are written
 * in one transaction, so a crash never loses an accepted request. Syncs of one organization and environment run
 * one at a time: a sync started while another is unfinished is stored as `pending` and enqueued when the earlier
 * one finishes (see sync-runner.ts).
 */
import type PgBoss from 'pg-boss';
import type { Db, DbOrTx } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { UnsendableRecord, setAsideUnsendableRecords, recordError, usableExternalId } from './records.js';
import type { Tenant } from '../../db/tenant.js';
import { syncQueue, type SyncJobData } from './sync-queue.js';
import { insertBatch, insertSyncJob, lockTenantSyncs, measuredRate, unfinishedSyncs } from './sync-repository.js';
import type { SyncMode, SyncRecordError } from './tables.js';

/** Records per stored batch, and per write transaction of the worker. */
export const SYNC_BATCH_SIZE = 5000;
/** Until a sync has completed on this database, estimates assume this rate (records per second). */
const DEFAULT_RATE = 20_000;

/** Positions, within each batch, of the records whose externalId occurs again later: the last occurrence wins. */
export function supersededPositions(records: readonly unknown[], batchSize: number): number[][] {
  const lastIndex = new Map<string, number>();
  records.forEach((record, index) => {
    const id = usableExternalId(record);
    if (id !== null) lastIndex.set(id, index);
  });
  const batches: number[][] = [];
  for (let start = 0; start < records.length; start += batchSize) {
    const positions: number[] = [];
    const end = Math.min(records.length, start + batchSize);
    for (let index = start; index < end; index++) {
      const id = usableExternalId(records[index]);
      if (id !== null && lastIndex.get(id) !== index) positions.push(index - start);
    }
    batches.push(positions);
  }
  return batches;
}

/**
 * Enqueues a run of the sync job: at once (a new or promoted job, ahead of any check) or, for the dead-man's
 * switch, after `checkAfterSeconds`. Returns the queue entry's id.
 */
export async function enqueueSync(
  boss: PgBoss,
  db: DbOrTx,
  tenant: Tenant,
  syncJobId: string,
  checkAfterSeconds?: number,
): Promise<string | null> {
  const data: SyncJobData = { syncJobId, ...tenant };
  return syncQueue.send(
    boss,
    db,
    data,
    checkAfterSeconds ? { startAfter: checkAfterSeconds, priority: 0 } : { priority: 1 },
  );
}

/**
 * One stored batch: the records as JSON text, an unsendable record's place holding `null`, and the unsendable
 * records' errors (found by `recordProblems` when the request was read: such a record cannot be stored as JSON as it
 * came).
 */
export function batchOf(
  records: readonly unknown[],
  start: number,
): { recordsJson: string; unsendable: SyncRecordError[] } {
  const unsendable: SyncRecordError[] = [];
  records.forEach((record, position) => {
    if (record instanceof UnsendableRecord)
      unsendable.push(recordError(start + position, record.externalId, record.problems));
  });
  const recordsJson = JSON.stringify(
    unsendable.length === 0 ? records : records.map((record) => (record instanceof UnsendableRecord ? null : record)),
  );
  return { recordsJson, unsendable };
}

export async function startSync(
  deps: { db: Db; boss: PgBoss },
  tenant: Tenant,
  request: { mode: SyncMode; dryRun: boolean; records: unknown[] },
): Promise<{ jobId: string; status: 'pending' | 'processing'; totalRecords: number; estimatedCompletionTime: Date }> {
  const { records } = request;
  // Done by the request path already (http/app.ts); for any other caller, a record JSON cannot carry is set aside here.
  setAsideUnsendableRecords(records);
  const superseded = supersededPositions(records, SYNC_BATCH_SIZE);
  const jobId = newId('job');
  const rate = (await measuredRate(deps.db, tenant)) ?? DEFAULT_RATE;
  const accepted = await deps.db.transaction().execute(async (tx) => {
    await lockTenantSyncs(tx, tenant);
    const ahead = await unfinishedSyncs(tx, tenant);
    const status = ahead.jobs > 0 ? ('pending' as const) : ('processing' as const);
    await insertSyncJob(tx, {
      id: jobId,
      tenant,
      mode: request.mode,
      dryRun: request.dryRun,
      status,
      totalRecords: records.length,
    });
    for (let batchNo = 0; batchNo < superseded.length; batchNo++) {
      const start = batchNo * SYNC_BATCH_SIZE;
      const { recordsJson, unsendable } = batchOf(records.slice(start, start + SYNC_BATCH_SIZE), start);
      await insertBatch(tx, tenant, jobId, batchNo, recordsJson, superseded[batchNo]!, unsendable);
    }
    if (status === 'processing') await enqueueSync(deps.boss, tx, tenant, jobId);
    return { status, remainingAhead: ahead.remainingRecords };
  });
  const seconds = (accepted.remainingAhead + records.length) / rate;
  return {
    jobId,
    status: accepted.status,
    totalRecords: records.length,
    estimatedCompletionTime: new Date(Date.now() + Math.ceil(seconds * 1000)),
  };
}
