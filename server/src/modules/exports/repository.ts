/** All SQL of the exports module. Every query that serves a caller is scoped by organization and environment. */
import { sql, type Selectable } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/schema.js';
import type { ChoiceValues, ExportFormat, ExportsTable } from './tables.js';

export type ExportRow = Selectable<ExportsTable>;

/** How long a completed file is kept, and how long the records outlive it. */
export const FILE_RETENTION = '7 days';
const RECORD_RETENTION = '30 days';
const DELETIONS_RETENTION = '30 days';

export interface NewExport {
  id: string;
  surveyId: string;
  format: ExportFormat;
  questionIds: string[] | null;
  choiceValues: ChoiceValues;
  bom: boolean;
  escapeFormulas: boolean;
  submittedAfter: Date | null;
  submittedBefore: Date | null;
}

export function insertExport(db: DbOrTx, tenant: Tenant, e: NewExport): Promise<ExportRow> {
  return db
    .insertInto('exports')
    .values({
      organization_id: tenant.organizationId,
      environment: tenant.environment,
      id: e.id,
      survey_id: e.surveyId,
      format: e.format,
      status: 'pending',
      question_ids: e.questionIds,
      choice_values: e.choiceValues,
      bom: e.bom,
      escape_formulas: e.escapeFormulas,
      submitted_after: e.submittedAfter,
      submitted_before: e.submittedBefore,
      watermark: null,
      total_rows: null,
      row_count: null,
      size: null,
      file_attempt: null,
      error: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findExport(db: DbOrTx, tenant: Tenant, id: string): Promise<ExportRow | undefined> {
  return db
    .selectFrom('exports')
    .selectAll()
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The latest instant before which every response (and deletion) is committed: the start of the oldest other
 * transaction of this database still open, or now, less a margin for the application servers' clocks (a
 * response's `submitted_at` is taken by the server, just after its transaction began), at millisecond precision.
 * See `Export.watermark` in the contract.
 */
export async function commitHorizon(db: DbOrTx, clockMarginMs: number): Promise<Date> {
  const { rows } = await sql<{ horizon: Date }>`
    select date_trunc('milliseconds',
      least(clock_timestamp(), (select min(xact_start) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null))
      - make_interval(secs => ${clockMarginMs / 1000})) as horizon`.execute(db);
  return rows[0]!.horizon;
}

export interface Window {
  surveyId: string;
  after: Date | null;
  before: Date;
}

function windowed(db: DbOrTx, tenant: Tenant, w: Window) {
  let query = db
    .selectFrom('responses')
    .where('survey_id', '=', w.surveyId)
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('submitted_at', '<', w.before);
  if (w.after) query = query.where('submitted_at', '>=', w.after);
  return query;
}

export async function countWindow(db: DbOrTx, tenant: Tenant, w: Window): Promise<number> {
  const row = await windowed(db, tenant, w).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

export interface PageRow {
  id: string;
  respondent_external_id: string | null;
  distribution_id: string | null;
  answers: unknown;
  /** ISO 8601 UTC with milliseconds, formatted by PostgreSQL (cheaper than a Date per row in the worker). */
  submitted_at: string;
}

const CURSOR = 'export_rows';

/**
 * Opens a cursor over the window in (submitted_at, id) order, in `tx` (a transaction the caller keeps open for
 * the whole read). A cursor plans for the first rows (an index scan on responses_by_survey, read backwards)
 * whatever the table's statistics say, and reads everything from one snapshot; `fetchPage` then pulls it a
 * page at a time, so the worker holds one page in memory.
 */
export async function openCursor(tx: DbOrTx, tenant: Tenant, w: Window): Promise<void> {
  await sql`declare ${sql.raw(CURSOR)} no scroll cursor for
    select id, respondent_external_id, distribution_id, answers,
      to_char(submitted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as submitted_at
    from responses
    where survey_id = ${w.surveyId} and organization_id = ${tenant.organizationId} and environment = ${tenant.environment}
      and submitted_at < ${w.before} and (${w.after}::timestamptz is null or submitted_at >= ${w.after}::timestamptz)
    order by submitted_at, id`.execute(tx);
}

export async function fetchPage(tx: DbOrTx, limit: number): Promise<PageRow[]> {
  const { rows } = await sql<PageRow>`fetch forward ${sql.raw(String(Math.trunc(limit)))} from ${sql.raw(CURSOR)}`.execute(tx);
  return rows;
}

/** Claims a new attempt; the window's end and row total are fixed by the first one. */
export function beginAttempt(db: DbOrTx, tenant: Tenant, id: string, first: { watermark: Date; totalRows: number } | null) {
  return db
    .updateTable('exports')
    .set((eb) => ({
      status: 'processing',
      attempts: eb('attempts', '+', 1),
      started_at: sql`coalesce(started_at, now())`,
      rows_written: 0,
      ...(first ? { watermark: first.watermark, total_rows: first.totalRows } : {}),
    }))
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

/** Chunks of attempts that never completed: invisible, and removed as soon as a new attempt starts. */
export async function deleteChunksExcept(db: DbOrTx, tenant: Tenant, exportId: string, keepAttempt: number | null): Promise<void> {
  let query = db
    .deleteFrom('export_chunks')
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('export_id', '=', exportId);
  if (keepAttempt !== null) query = query.where('attempt', '<>', keepAttempt);
  await query.execute();
}

/**
 * One chunk, committed without waiting for its WAL flush: the synchronous commit that completes the export flushes
 * the WAL up to itself, chunks included, and a chunk lost in a crash before that only loses its attempt.
 */
export async function insertChunk(db: Db, tenant: Tenant, exportId: string, attempt: number, seq: number, byteOffset: number, data: Buffer): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`set local synchronous_commit = off`.execute(tx);
    await tx
      .insertInto('export_chunks')
      .values({ organization_id: tenant.organizationId, environment: tenant.environment, export_id: exportId, attempt, seq, byte_offset: byteOffset, data })
      .execute();
  });
}

export async function saveProgress(db: DbOrTx, tenant: Tenant, exportId: string, attempt: number, rowsWritten: number): Promise<void> {
  await db
    .updateTable('exports')
    .set({ rows_written: rowsWritten })
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', exportId)
    .where('attempts', '=', attempt)
    .where('status', '=', 'processing')
    .execute();
}

/** Completes the export if `attempt` is still the current one; undefined otherwise (a newer attempt took over). */
export function completeExport(db: DbOrTx, tenant: Tenant, exportId: string, attempt: number, result: { rowCount: number; size: number }) {
  return db
    .updateTable('exports')
    .set({
      status: 'completed',
      rows_written: result.rowCount,
      row_count: result.rowCount,
      size: result.size,
      file_attempt: attempt,
      completed_at: sql`now()`,
      expires_at: sql`now() + ${FILE_RETENTION}::interval`,
    })
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', exportId)
    .where('attempts', '=', attempt)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
}

export function failExport(db: DbOrTx, tenant: Tenant, exportId: string, error: string) {
  return db
    .updateTable('exports')
    .set({ status: 'failed', error: error.slice(0, 1000), completed_at: sql`now()` })
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', exportId)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

export interface ChunkInfo {
  seq: number;
  byte_offset: number;
  length: number;
}

/** The file's chunk map (a few hundred rows for a large file), without the data. */
export function listChunks(db: DbOrTx, tenant: Tenant, exportId: string, attempt: number): Promise<ChunkInfo[]> {
  return db
    .selectFrom('export_chunks')
    .select(['seq', 'byte_offset', sql<number>`octet_length(data)`.as('length')])
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('export_id', '=', exportId)
    .where('attempt', '=', attempt)
    .orderBy('seq')
    .execute();
}

/** Bytes [from, from + length) of one chunk (0-based within the chunk). */
export async function readChunkSlice(db: DbOrTx, tenant: Tenant, exportId: string, attempt: number, seq: number, from: number, length: number): Promise<Buffer> {
  const row = await db
    .selectFrom('export_chunks')
    .select(sql<Buffer>`substring(data from ${from + 1} for ${length})`.as('part'))
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('export_id', '=', exportId)
    .where('attempt', '=', attempt)
    .where('seq', '=', seq)
    .executeTakeFirst();
  if (!row) throw new Error(`chunk ${seq} of export ${exportId} is missing`);
  return row.part;
}

export async function listDeletions(db: DbOrTx, tenant: Tenant, w: Window, limit: number, offset: number) {
  let query = db
    .selectFrom('response_deletions')
    .where('organization_id', '=', tenant.organizationId)
    .where('environment', '=', tenant.environment)
    .where('survey_id', '=', w.surveyId)
    .where('deleted_at', '<', w.before);
  if (w.after) query = query.where('deleted_at', '>=', w.after);
  const [rows, total] = await Promise.all([
    query.select(['response_id', 'survey_id', 'deleted_at']).orderBy('deleted_at').orderBy('response_id').limit(limit).offset(offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

/** The scheduled clean-up: expired files, old export records, old deletion entries. */
export async function deleteExpired(db: DbOrTx): Promise<{ files: number; exports: number; deletions: number }> {
  const expired = await db
    .updateTable('exports')
    .set({ file_deleted_at: sql`now()` })
    .where('expires_at', '<=', sql<Date>`now()`)
    .where('file_deleted_at', 'is', null)
    .returning(['organization_id', 'environment', 'id'])
    .execute();
  for (const e of expired) {
    await db
      .deleteFrom('export_chunks')
      .where('organization_id', '=', e.organization_id)
      .where('environment', '=', e.environment)
      .where('export_id', '=', e.id)
      .execute();
  }
  const exports = await db
    .deleteFrom('exports')
    .where(sql<boolean>`coalesce(expires_at, completed_at, created_at) < now() - ${RECORD_RETENTION}::interval`)
    .where('status', 'in', ['completed', 'failed'])
    .executeTakeFirst();
  const deletions = await db.deleteFrom('response_deletions').where('deleted_at', '<', sql<Date>`now() - ${DELETIONS_RETENTION}::interval`).executeTakeFirst();
  return { files: expired.length, exports: Number(exports.numDeletedRows), deletions: Number(deletions.numDeletedRows) };
}

/** Chunks of failed exports are dropped when they fail; this is the fallback for crashed deletions. */
export async function deleteChunksOfFailed(db: DbOrTx): Promise<void> {
  await sql`delete from export_chunks c using exports e
    where e.organization_id = c.organization_id and e.environment = c.environment and e.id = c.export_id
      and (e.status = 'failed' or (e.status = 'completed' and c.attempt <> e.file_attempt))`.execute(db);
}
