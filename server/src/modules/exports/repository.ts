/** All SQL of the exports module. Every query that serves a caller is scoped by organization and environment. */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import { acrossTenants, tenantColumns, tenantIs, tenantOfRow, type Tenant } from '../../db/tenant.js';
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
  language: string | null;
  bom: boolean;
  escapeFormulas: boolean;
  submittedAfter: Date | null;
  submittedBefore: Date | null;
  /** An increment: what the previous export covered (its snapshot and submitted_before). */
  previous: { snapshot: string; before: Date | null } | null;
}

/**
 * Inserts the export with a snapshot taken by the request (`pg_current_snapshot()`): every response committed
 * before the request reached the database is seen by it — acknowledged means exported.
 *
 * The snapshot is read through the survey's row, by a statement of its own: on Citus that statement runs on the
 * node holding the tenant's shards, whose transactions stamp the responses' `xact_id` (the trigger of
 * sql/10_stamp_writing_transaction.sql), so snapshot and stamps count in the same transaction ids. An INSERT's own
 * `pg_current_snapshot()` would be the coordinator's. On one PostgreSQL both are the same server's.
 */
export async function insertExport(db: DbOrTx, tenant: Tenant, e: NewExport): Promise<ExportRow> {
  const taken = await db
    .selectFrom('surveys')
    .select(sql<string>`pg_current_snapshot()::text`.as('snapshot'))
    .where(tenantIs(tenant))
    .where('id', '=', e.surveyId)
    .executeTakeFirstOrThrow();
  return db
    .insertInto('exports')
    .values({
      ...tenantColumns(tenant),
      id: e.id,
      survey_id: e.surveyId,
      format: e.format,
      status: 'pending',
      question_ids: e.questionIds,
      choice_values: e.choiceValues,
      language: e.language,
      bom: e.bom,
      escape_formulas: e.escapeFormulas,
      submitted_after: e.submittedAfter,
      submitted_before: e.submittedBefore,
      snapshot: taken.snapshot,
      // After the snapshot was taken, so every response it sees committed before this time (on the database's clock).
      snapshot_at: sql<Date>`date_trunc('milliseconds', clock_timestamp())`,
      previous_snapshot: e.previous?.snapshot ?? null,
      previous_before: e.previous?.before ?? null,
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
  return db.selectFrom('exports').selectAll().where(tenantIs(tenant)).where('id', '=', id).executeTakeFirst();
}

/**
 * What an export holds (its responses, and its deletions list):
 *
 * - the rows of the survey whose writing transaction (`xact_id`) `snapshot` sees as committed — everything
 *   acknowledged before the export was requested, nothing still in flight then; NULL (rows written before
 *   snapshots existed) counts as seen by every snapshot;
 * - within the time window `after` (inclusive) to `before` (exclusive) on `submitted_at` (deletions:
 *   `deleted_at`), when given;
 * - less, for an increment, what the previous export of the chain covered: the rows its snapshot saw, within
 *   its `before` (`previous.before`).
 *
 * A later snapshot sees everything an earlier one saw, so a chain where no export ends before its predecessor
 * (startExport refuses that) covers `seen by the newest snapshot ∧ within [chain start, newest before)` after
 * each export: every row lands in exactly one export of the chain — the first whose snapshot sees it committed.
 * A row whose transaction was in progress at a snapshot is not seen by it, however old the row's `submitted_at`,
 * so it goes to the next export, never lost; transactions of other tenants only lower a snapshot's xmin, which
 * widens the index range an increment reads, never what it holds.
 *
 * `snapshot` null: an export accepted before snapshots (a time window only, `before` = its watermark).
 */
export interface Scope {
  surveyId: string;
  after: Date | null;
  before: Date | null;
  snapshot: string | null;
  previous: { snapshot: string; before: Date | null } | null;
}

/** The scope of an export row (see Scope). */
export function scopeOf(row: ExportRow): Scope {
  return {
    surveyId: row.survey_id,
    after: row.submitted_after,
    before: row.snapshot === null ? row.watermark : row.submitted_before,
    snapshot: row.snapshot,
    previous: row.previous_snapshot === null ? null : { snapshot: row.previous_snapshot, before: row.previous_before },
  };
}

/**
 * The scope as one SQL condition on `responses` (time column `submitted_at`) or `response_deletions`
 * (`deleted_at`). An increment's condition holds a range on `xact_id` — from the previous snapshot's xmin (every
 * older transaction was seen by it) to the new snapshot's xmax (no later one is seen by it) — that the
 * tenant-led `…_by_xact` index serves; `pg_visible_in_snapshot` then filters that range row by row.
 */
function scopeCondition(tenant: Tenant, s: Scope, timeColumn: 'submitted_at' | 'deleted_at'): RawBuilder<boolean> {
  const time = sql.ref(timeColumn);
  const parts: RawBuilder<unknown>[] = [tenantIs(tenant), sql`survey_id = ${s.surveyId}`];
  if (s.after) parts.push(sql`${time} >= ${s.after}`);
  if (s.before) parts.push(sql`${time} < ${s.before}`);
  if (s.snapshot !== null) {
    const seen = sql`${s.snapshot}::pg_snapshot`;
    if (s.previous) {
      const seenBefore = sql`${s.previous.snapshot}::pg_snapshot`;
      const fresh = sql`(xact_id >= pg_snapshot_xmin(${seenBefore}) and xact_id < pg_snapshot_xmax(${seen})
        and pg_visible_in_snapshot(xact_id, ${seen}) and not pg_visible_in_snapshot(xact_id, ${seenBefore}))`;
      parts.push(
        s.previous.before === null
          ? fresh
          : // Also what the previous export's window ended before: seen by it or not, it was not in it.
            sql`(${fresh} or (${time} >= ${s.previous.before} and (xact_id is null or pg_visible_in_snapshot(xact_id, ${seen}))))`,
      );
    } else {
      parts.push(sql`(xact_id is null or pg_visible_in_snapshot(xact_id, ${seen}))`);
    }
  }
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

export async function countScope(db: DbOrTx, tenant: Tenant, scope: Scope): Promise<number> {
  const { rows } = await sql<{
    count: string;
  }>`select count(*) as count from responses where ${scopeCondition(tenant, scope, 'submitted_at')}`.execute(db);
  return Number(rows[0]!.count);
}

export interface PageRow {
  id: string;
  respondent_external_id: string | null;
  distribution_id: string | null;
  /** Null for responses stored before surveys had versions (version 1). */
  survey_version: number | null;
  language: string | null;
  answers: unknown;
  /** ISO 8601 UTC with milliseconds, formatted by PostgreSQL (cheaper than a Date per row in the worker). */
  submitted_at: string;
}

const CURSOR = 'export_rows';

/**
 * The query of an export's rows in (submitted_at, id) order. A cursor over it plans for the first rows: a full
 * export reads responses_by_survey backwards whatever the table's statistics say; an increment reads its xact_id
 * range on responses_by_xact and sorts that (see scopeCondition). The order names the table's column: a bare
 * `submitted_at` would be the formatted output column, a text no index provides (a sort of the whole survey).
 */
export function scopeRowsQuery(tenant: Tenant, scope: Scope) {
  return sql`select id, respondent_external_id, distribution_id, survey_version, language, answers,
      to_char(submitted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as submitted_at
    from responses
    where ${scopeCondition(tenant, scope, 'submitted_at')}
    order by responses.submitted_at, responses.id`;
}

/**
 * Opens a cursor over the scope's rows, in `tx` (a transaction the caller keeps open for the whole read): one
 * consistent read, which `fetchPage` then pulls a page at a time, so the worker holds one page in memory.
 */
export async function openCursor(tx: DbOrTx, tenant: Tenant, scope: Scope): Promise<void> {
  await sql`declare ${sql.raw(CURSOR)} no scroll cursor for ${scopeRowsQuery(tenant, scope)}`.execute(tx);
}

export async function fetchPage(tx: DbOrTx, limit: number): Promise<PageRow[]> {
  const { rows } =
    await sql<PageRow>`fetch forward ${sql.raw(String(Math.trunc(limit)))} from ${sql.raw(CURSOR)}`.execute(tx);
  return rows;
}

/**
 * Claims a new attempt; the watermark and row total are fixed by the first one. The first start time is set by a
 * statement of its own: Citus refuses a clock function inside COALESCE in a distributed update.
 */
export async function beginAttempt(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  first: { watermark: Date; totalRows: number } | null,
) {
  await db
    .updateTable('exports')
    .set({ started_at: sql`now()` })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .where('started_at', 'is', null)
    .execute();
  return db
    .updateTable('exports')
    .set((eb) => ({
      status: 'processing',
      attempts: eb('attempts', '+', 1),
      rows_written: 0,
      ...(first ? { watermark: first.watermark, total_rows: first.totalRows } : {}),
    }))
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

/** Chunks of attempts that never completed: invisible, and removed as soon as a new attempt starts. */
export async function deleteChunksExcept(
  db: DbOrTx,
  tenant: Tenant,
  exportId: string,
  keepAttempt: number | null,
): Promise<void> {
  let query = db.deleteFrom('export_chunks').where(tenantIs(tenant)).where('export_id', '=', exportId);
  if (keepAttempt !== null) query = query.where('attempt', '<>', keepAttempt);
  await query.execute();
}

/**
 * One chunk, committed without waiting for its WAL flush: the synchronous commit that completes the export flushes
 * the WAL up to itself, chunks included, and a chunk lost in a crash before that only loses its attempt.
 */
export async function insertChunk(
  db: Db,
  tenant: Tenant,
  exportId: string,
  attempt: number,
  seq: number,
  byteOffset: number,
  data: Buffer,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`set local synchronous_commit = off`.execute(tx);
    await tx
      .insertInto('export_chunks')
      .values({
        ...tenantColumns(tenant),
        export_id: exportId,
        attempt,
        seq,
        byte_offset: byteOffset,
        data,
      })
      .execute();
  });
}

export async function saveProgress(
  db: DbOrTx,
  tenant: Tenant,
  exportId: string,
  attempt: number,
  rowsWritten: number,
): Promise<void> {
  await db
    .updateTable('exports')
    .set({ rows_written: rowsWritten })
    .where(tenantIs(tenant))
    .where('id', '=', exportId)
    .where('attempts', '=', attempt)
    .where('status', '=', 'processing')
    .execute();
}

/** Completes the export if `attempt` is still the current one; undefined otherwise (a newer attempt took over). */
export function completeExport(
  db: DbOrTx,
  tenant: Tenant,
  exportId: string,
  attempt: number,
  result: { rowCount: number; size: number },
) {
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
    .where(tenantIs(tenant))
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
    .where(tenantIs(tenant))
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
    .where(tenantIs(tenant))
    .where('export_id', '=', exportId)
    .where('attempt', '=', attempt)
    .orderBy('seq')
    .execute();
}

/** Bytes [from, from + length) of one chunk (0-based within the chunk). */
export async function readChunkSlice(
  db: DbOrTx,
  tenant: Tenant,
  exportId: string,
  attempt: number,
  seq: number,
  from: number,
  length: number,
): Promise<Buffer> {
  const row = await db
    .selectFrom('export_chunks')
    .select(sql<Buffer>`substring(data from ${from + 1} for ${length})`.as('part'))
    .where(tenantIs(tenant))
    .where('export_id', '=', exportId)
    .where('attempt', '=', attempt)
    .where('seq', '=', seq)
    .executeTakeFirst();
  if (!row) throw new Error(`chunk ${seq} of export ${exportId} is missing`);
  return row.part;
}

/** The deletions of an export: by the same scope as its rows, on the deleting transaction and `deleted_at`. */
export async function listDeletions(db: DbOrTx, tenant: Tenant, scope: Scope, limit: number, offset: number) {
  const query = db.selectFrom('response_deletions').where(scopeCondition(tenant, scope, 'deleted_at'));
  const [rows, total] = await Promise.all([
    query
      .select(['response_id', 'survey_id', 'deleted_at'])
      .orderBy('deleted_at')
      .orderBy('response_id')
      .limit(limit)
      .offset(offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

/** The scheduled clean-up: expired files, old export records, old deletion entries. */
export async function deleteExpired(db: DbOrTx): Promise<{ files: number; exports: number; deletions: number }> {
  const job = acrossTenants(db, "the exports.cleanup job expires every tenant's files, records and deletions");
  const expired = await job
    .updateTable('exports')
    .set({ file_deleted_at: sql`now()` })
    .where('expires_at', '<=', sql<Date>`now()`)
    .where('file_deleted_at', 'is', null)
    .returning(['organization_id', 'environment', 'id'])
    .execute();
  for (const e of expired) {
    await db
      .deleteFrom('export_chunks')
      .where(tenantIs(tenantOfRow(e)))
      .where('export_id', '=', e.id)
      .execute();
  }
  const exports = await job
    .deleteFrom('exports')
    .where(sql<boolean>`coalesce(expires_at, completed_at, created_at) < now() - ${RECORD_RETENTION}::interval`)
    .where('status', 'in', ['completed', 'failed'])
    .executeTakeFirst();
  const deletions = await job
    .deleteFrom('response_deletions')
    .where('deleted_at', '<', sql<Date>`now() - ${DELETIONS_RETENTION}::interval`)
    .executeTakeFirst();
  return {
    files: expired.length,
    exports: Number(exports.numDeletedRows),
    deletions: Number(deletions.numDeletedRows),
  };
}

/** A tenant's stored export files completed before `before`, but of the surveys named (retention's legal holds). */
function filesCompletedBefore(db: DbOrTx, tenant: Tenant, before: Date, keptSurveyIds: readonly string[]) {
  let query = db
    .selectFrom('exports')
    .where(tenantIs(tenant))
    .where('status', '=', 'completed')
    .where('file_deleted_at', 'is', null)
    .where('completed_at', '<', before);
  if (keptSurveyIds.length > 0) query = query.where('survey_id', '<>', sql<string>`all(${[...keptSurveyIds]}::text[])`);
  return query;
}

/** How many, leaving out `exceptIds` (files counted already for another reason). */
export async function countFilesCompletedBefore(
  db: DbOrTx,
  tenant: Tenant,
  before: Date,
  keptSurveyIds: readonly string[],
  exceptIds: readonly string[],
): Promise<number> {
  let query = filesCompletedBefore(db, tenant, before, keptSurveyIds);
  if (exceptIds.length > 0) query = query.where('id', '<>', sql<string>`all(${[...exceptIds]}::text[])`);
  const row = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Deletes at most `limit` of those files now, as their expiry would (downloads answer 410 `export_expired`): a
 * retention policy shorter than the service's 7 days. How many went.
 */
export async function expireFilesCompletedBefore(
  db: DbOrTx,
  tenant: Tenant,
  before: Date,
  keptSurveyIds: readonly string[],
  limit: number,
): Promise<number> {
  const due = await filesCompletedBefore(db, tenant, before, keptSurveyIds)
    .select('id')
    .orderBy('completed_at')
    .limit(limit)
    .execute();
  if (due.length === 0) return 0;
  const ids = sql<string>`any(${due.map((d) => d.id)}::text[])`;
  await db
    .updateTable('exports')
    .set({ file_deleted_at: sql`now()`, expires_at: sql`now()` })
    .where(tenantIs(tenant))
    .where('id', '=', ids)
    .execute();
  await db.deleteFrom('export_chunks').where(tenantIs(tenant)).where('export_id', '=', ids).execute();
  return due.length;
}

/** Chunks of failed exports are dropped when they fail; this is the fallback for crashed deletions. */
export async function deleteChunksOfFailed(db: DbOrTx): Promise<void> {
  await sql`delete from export_chunks c using exports e
    where e.organization_id = c.organization_id and e.environment = c.environment and e.id = c.export_id
      and (e.status = 'failed' or (e.status = 'completed' and c.attempt <> e.file_attempt))`.execute(
    acrossTenants(db, "the exports.cleanup job's fallback sweeps every tenant's orphaned chunks"),
  );
}

/**
 * The exports of these surveys that hold (or, still being written, will hold) one of these responses: completed
 * ones whose file is still stored, and pending or processing ones, each judged by its own scope (its snapshot and
 * window, as its file is written). For an erasure (privacy module), read before the responses change.
 */
export async function exportsHolding(
  db: DbOrTx,
  tenant: Tenant,
  surveyIds: readonly string[],
  responseIds: readonly string[],
): Promise<{ id: string; status: ExportRow['status'] }[]> {
  if (surveyIds.length === 0 || responseIds.length === 0) return [];
  return exportsHoldingWhere(db, tenant, surveyIds, sql`id = any(${[...responseIds]}::text[])`);
}

/**
 * The same for the responses a condition on `responses r` selects (a retention rule's, surveys module's
 * `dueResponsesCondition`).
 */
export async function exportsHoldingWhere(
  db: DbOrTx,
  tenant: Tenant,
  surveyIds: readonly string[],
  responses: RawBuilder<unknown>,
): Promise<{ id: string; status: ExportRow['status'] }[]> {
  const candidates = await db
    .selectFrom('exports')
    .selectAll()
    .where(tenantIs(tenant))
    .where('survey_id', '=', sql<string>`any(${[...surveyIds]}::text[])`)
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['pending', 'processing']),
        eb.and([eb('status', '=', 'completed'), eb('file_deleted_at', 'is', null)]),
      ]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const holding: { id: string; status: ExportRow['status'] }[] = [];
  for (const row of candidates) {
    const { rows } = await sql<{ holds: boolean }>`select exists (
        select 1 from responses r where ${scopeCondition(tenant, scopeOf(row), 'submitted_at')} and ${responses}
      ) as holds`.execute(db);
    if (rows[0]?.holds) holding.push({ id: row.id, status: row.status });
  }
  return holding;
}

/**
 * The exports whose file holds (or, still being written, will hold) a response of these people deleted since it was
 * taken: the deletion came after the export's snapshot (`watermark`, else its creation) and the response falls in
 * its window. For an erasure (privacy module), which deletes those files too; judged on the deletions list, which
 * keeps whose response it was for its 30 days (longer than a file's 7).
 */
export async function exportsHoldingDeletedOf(
  db: DbOrTx,
  tenant: Tenant,
  externalIds: readonly string[],
): Promise<{ id: string; status: ExportRow['status'] }[]> {
  if (externalIds.length === 0) return [];
  const { rows } = await sql<{ id: string; status: ExportRow['status'] }>`
    select e.id, e.status from exports e
    where ${tenantIs(tenant, 'e')}
      and (e.status in ('pending', 'processing') or (e.status = 'completed' and e.file_deleted_at is null))
      and exists (select 1 from response_deletions d
        where d.organization_id = e.organization_id and d.environment = e.environment and d.survey_id = e.survey_id
          and d.respondent_external_id = any(${[...externalIds]}::text[])
          and d.deleted_at >= coalesce(e.watermark, e.created_at)
          and (e.submitted_after is null or d.submitted_at >= e.submitted_after)
          and (e.submitted_before is null or d.submitted_at < e.submitted_before))
    order by e.created_at, e.id`.execute(db);
  return rows;
}

/** The deletions list forgets whose responses these people's were (an erasure of them). */
export async function forgetDeletedRespondents(
  db: DbOrTx,
  tenant: Tenant,
  externalIds: readonly string[],
): Promise<void> {
  if (externalIds.length === 0) return;
  await db
    .updateTable('response_deletions')
    .set({ respondent_external_id: null })
    .where(tenantIs(tenant))
    .where('respondent_external_id', '=', sql<string>`any(${[...externalIds]}::text[])`)
    .execute();
}

/**
 * Deletes the files of completed exports that held an erased person's responses, recording which erasure did
 * (their downloads answer 410 `export_erased`), and fails the pending and processing ones, whose files would hold
 * them: a running worker's completion then finds nothing to complete, and the clean-up drops its chunks.
 */
export async function eraseExportFiles(
  db: DbOrTx,
  tenant: Tenant,
  exportIds: readonly string[],
  erasureId: string,
): Promise<void> {
  if (exportIds.length === 0) return;
  const ids = sql<string>`any(${[...exportIds]}::text[])`;
  await db
    .updateTable('exports')
    .set({ file_deleted_at: sql`now()`, file_erased_at: sql`now()`, file_erased_by: erasureId })
    .where(tenantIs(tenant))
    .where('id', '=', ids)
    .where('status', '=', 'completed')
    .where('file_deleted_at', 'is', null)
    .execute();
  await db
    .updateTable('exports')
    .set({
      status: 'failed',
      error: erasureId.startsWith('ret_')
        ? `A retention run (${erasureId}) removed responses this export would hold; start a new export.`
        : `An erasure (${erasureId}) removed a person whose responses this export would hold; start a new export.`,
      completed_at: sql`now()`,
      file_erased_at: sql`now()`,
      file_erased_by: erasureId,
    })
    .where(tenantIs(tenant))
    .where('id', '=', ids)
    .where('status', 'in', ['pending', 'processing'])
    .execute();
  await db.deleteFrom('export_chunks').where(tenantIs(tenant)).where('export_id', '=', ids).execute();
}
