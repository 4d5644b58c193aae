/**
 * All SQL on `sync_jobs` and `sync_job_batches`. A job's batches carry its tenant and are read and written under
 * it, and so is the job itself: its queue entry carries the tenant with the id.
 */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { SyncJobsTable, SyncMode, SyncRecordError, SyncStatus } from './tables.js';

export type SyncJobRecord = Selectable<SyncJobsTable>;

/**
 * Serializes, per organization and environment, the decisions "does this sync wait?" and "which sync is next?"
 * (held until the end of the transaction).
 */
export async function lockTenantSyncs(db: DbOrTx, tenant: Tenant): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`respondents.sync:${tenant.organizationId}:${tenant.environment}`}, 0))`.execute(
    db,
  );
}

/** Syncs of the tenant not finished yet, and how many records they still have to go through. */
export async function unfinishedSyncs(db: DbOrTx, tenant: Tenant): Promise<{ jobs: number; remainingRecords: number }> {
  const row = await db
    .selectFrom('sync_jobs')
    .select((eb) => [
      eb.fn.countAll<number>().as('jobs'),
      sql<number>`coalesce(sum(total_records - processed_records), 0)::int`.as('remaining'),
    ])
    .where(tenantIs(tenant))
    .where('status', 'in', ['pending', 'processing'])
    .executeTakeFirstOrThrow();
  return { jobs: Number(row.jobs), remainingRecords: row.remaining };
}

/**
 * Records per second over this tenant's most recent completed syncs, or undefined before its first one. The
 * tenant's own: their records' size sets the pace, and on Citus a look at every tenant's syncs would be a query
 * over all shards on the request path.
 */
export async function measuredRate(db: DbOrTx, tenant: Tenant): Promise<number | undefined> {
  const row = await sql<{ records: number | null; seconds: number | null }>`
    select sum(total_records)::float8 as records, sum(extract(epoch from completed_at - started_at))::float8 as seconds
    from (select total_records, started_at, completed_at from sync_jobs
          where ${tenantIs(tenant)} and status = 'completed' and started_at is not null and total_records >= 100
          order by completed_at desc limit 10) recent`.execute(db);
  const { records, seconds } = row.rows[0] ?? { records: null, seconds: null };
  return records && seconds && seconds > 0 ? records / seconds : undefined;
}

export async function insertSyncJob(
  db: DbOrTx,
  job: { id: string; tenant: Tenant; mode: SyncMode; dryRun: boolean; status: SyncStatus; totalRecords: number },
): Promise<SyncJobRecord> {
  return db
    .insertInto('sync_jobs')
    .values({
      id: job.id,
      ...tenantColumns(job.tenant),
      mode: job.mode,
      dry_run: job.dryRun,
      status: job.status,
      total_records: job.totalRecords,
      failure_reason: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** `unsendable`: the errors of the batch's records that could not be stored as JSON (their places hold `null`). */
export async function insertBatch(
  db: DbOrTx,
  tenant: Tenant,
  jobId: string,
  batchNo: number,
  recordsJson: string,
  superseded: number[],
  unsendable: readonly SyncRecordError[] = [],
): Promise<void> {
  await db
    .insertInto('sync_job_batches')
    .values({
      ...tenantColumns(tenant),
      job_id: jobId,
      batch_no: batchNo,
      records: recordsJson,
      superseded,
      ...(unsendable.length > 0 ? { unsendable: JSON.stringify(unsendable) } : {}),
    })
    .execute();
}

export async function readBatch(
  db: DbOrTx,
  tenant: Tenant,
  jobId: string,
  batchNo: number,
): Promise<{ records: unknown[]; superseded: number[]; unsendable: SyncRecordError[] }> {
  const row = await db
    .selectFrom('sync_job_batches')
    .select(['records', 'superseded', 'unsendable'])
    .where(tenantIs(tenant))
    .where('job_id', '=', jobId)
    .where('batch_no', '=', batchNo)
    .executeTakeFirstOrThrow();
  return { records: JSON.parse(row.records) as unknown[], superseded: row.superseded, unsendable: row.unsendable };
}

/** Batches not written yet (all of them for a job that has not started). */
export async function batchesToDo(db: DbOrTx, tenant: Tenant, jobId: string): Promise<number[]> {
  const rows = await db
    .selectFrom('sync_job_batches')
    .select('batch_no')
    .where(tenantIs(tenant))
    .where('job_id', '=', jobId)
    .where('done', '=', false)
    .orderBy('batch_no')
    .execute();
  return rows.map((r) => r.batch_no);
}

export interface BatchResult {
  records: number;
  created: number;
  updated: number;
  skipped: number;
  errorCount: number;
  errors: SyncRecordError[];
}

/**
 * In the transaction that wrote the batch: marks it done and adds its counts to the job's (increments are safe
 * here: the done flag commits with them, so a batch is counted once). Kept last in the transaction, so that
 * parallel writers hold the job row's lock only for a moment. The job keeps the first 100 errors in request order.
 */
export async function commitBatch(
  db: DbOrTx,
  tenant: Tenant,
  jobId: string,
  batchNo: number,
  result: BatchResult,
  maxErrors: number,
): Promise<void> {
  await db
    .updateTable('sync_job_batches')
    .set({ done: true })
    .where(tenantIs(tenant))
    .where('job_id', '=', jobId)
    .where('batch_no', '=', batchNo)
    .execute();
  await db
    .updateTable('sync_jobs')
    .set((eb) => ({
      processed_records: eb('processed_records', '+', result.records),
      processed_batches: eb('processed_batches', '+', 1),
      progress: sql<number>`least(99, ((processed_records + ${result.records}) * 100) / total_records)`,
      created_count: eb('created_count', '+', result.created),
      updated_count: eb('updated_count', '+', result.updated),
      skipped_count: eb('skipped_count', '+', result.skipped),
      error_count: eb('error_count', '+', result.errorCount),
      errors:
        result.errors.length === 0
          ? sql`errors`
          : sql`(select coalesce(jsonb_agg(e order by (e->>'index')::int), '[]'::jsonb) from (
              select e from jsonb_array_elements(errors || ${JSON.stringify(result.errors.slice(0, maxErrors))}::jsonb) e
              order by (e->>'index')::int limit ${maxErrors}) kept)`,
    }))
    .where(tenantIs(tenant))
    .where('id', '=', jobId)
    .execute();
}

export async function deleteBatches(db: DbOrTx, tenant: Tenant, jobId: string): Promise<void> {
  await db.deleteFrom('sync_job_batches').where(tenantIs(tenant)).where('job_id', '=', jobId).execute();
}

export async function findSyncJob(db: DbOrTx, tenant: Tenant, jobId: string): Promise<SyncJobRecord | undefined> {
  return db.selectFrom('sync_jobs').selectAll().where('id', '=', jobId).where(tenantIs(tenant)).executeTakeFirst();
}

/** A job by its id alone, for a queue entry that does not carry its tenant (queued before entries did). */
export async function getSyncJobById(db: DbOrTx, jobId: string): Promise<SyncJobRecord | undefined> {
  return acrossTenants(db, 'a queue entry from before entries carried the tenant names its job by id only')
    .selectFrom('sync_jobs')
    .selectAll()
    .where('id', '=', jobId)
    .executeTakeFirst();
}

/**
 * A worker took the job up (again). The first start time is set by a statement of its own: Citus refuses a
 * clock function inside COALESCE in a distributed update.
 */
export async function markAttempt(db: DbOrTx, tenant: Tenant, jobId: string): Promise<SyncJobRecord> {
  await db
    .updateTable('sync_jobs')
    .set({ started_at: sql`now()` })
    .where(tenantIs(tenant))
    .where('id', '=', jobId)
    .where('started_at', 'is', null)
    .execute();
  return db
    .updateTable('sync_jobs')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where(tenantIs(tenant))
    .where('id', '=', jobId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface SyncCounts {
  processedRecords: number;
  processedBatches: number;
  progress: number;
  created: number;
  updated: number;
  skipped: number;
  errorCount: number;
  deleted: number;
  errors: SyncRecordError[];
}

/** Absolute values, never increments: writing the same state twice can never count twice. */
export async function saveCounts(db: DbOrTx, tenant: Tenant, jobId: string, counts: SyncCounts): Promise<void> {
  await db
    .updateTable('sync_jobs')
    .set({
      processed_records: counts.processedRecords,
      processed_batches: counts.processedBatches,
      progress: counts.progress,
      created_count: counts.created,
      updated_count: counts.updated,
      skipped_count: counts.skipped,
      error_count: counts.errorCount,
      deleted_count: counts.deleted,
      errors: JSON.stringify(counts.errors),
    })
    .where(tenantIs(tenant))
    .where('id', '=', jobId)
    .execute();
}

/** `counts` when the caller tallied them (replace); otherwise the job's committed counts stand. */
export async function finishSyncJob(
  db: DbOrTx,
  tenant: Tenant,
  jobId: string,
  outcome: { status: 'completed' | 'failed'; failureReason: string | null },
): Promise<void> {
  await db
    .updateTable('sync_jobs')
    .set({ status: outcome.status, failure_reason: outcome.failureReason, completed_at: sql`now()`, progress: 100 })
    .where(tenantIs(tenant))
    .where('id', '=', jobId)
    .execute();
}

/** The oldest waiting sync of the tenant becomes `processing`; its id is returned for enqueueing. */
export async function promoteNextSync(db: DbOrTx, tenant: Tenant): Promise<string | undefined> {
  const next = await db
    .updateTable('sync_jobs')
    .set({ status: 'processing' })
    .where(tenantIs(tenant))
    .where(
      'id',
      '=',
      db
        .selectFrom('sync_jobs')
        .select('id')
        .where(tenantIs(tenant))
        .where('status', '=', 'pending')
        .orderBy('created_at')
        .orderBy('id')
        .limit(1),
    )
    .returning('id')
    .executeTakeFirst();
  return next?.id;
}
