/**
 * The worker side of an export (queue `responses.export`).
 *
 * Ownership and crash recovery are job ownership (jobs/owned.ts): the worker that runs an export holds a session
 * advisory lock on it, which PostgreSQL drops the moment that process dies, even on SIGKILL; a delayed check job
 * (the dead-man's switch) that finds the export unfinished and its lock free starts a new attempt within seconds.
 *
 * One complete file, never a half one: every attempt writes its own chunks (tagged with the attempt number),
 * starting from scratch; the transaction that marks the export completed names the attempt whose chunks form
 * the file, and only if that attempt is still the current one. Chunks of interrupted attempts are never read and
 * are deleted when the next attempt starts. The window (its end, the watermark) is fixed by the first attempt, so
 * a retry writes the same responses.
 */
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { Dependencies } from '../../dependencies.js';
import { checkAgainLater, runOwned, type Watchdog } from '../../jobs/owned.js';
import { recordEvent } from '../events/index.js';
import { findSurvey, findTranslationContent, localizeSurvey, showsIdentity } from '../surveys/index.js';
import { ChunkSink } from './chunk-sink.js';
import { AnswerMapper, createWriter, type SourceRow } from './formats.js';
import {
  beginAttempt,
  completeExport,
  countScope,
  deleteChunksExcept,
  failExport,
  findExport,
  fetchPage,
  openCursor,
  saveProgress,
  scopeOf,
  type ExportRow,
  type PageRow,
} from './repository.js';
import { exportQueue, type ExportJobData } from './queue.js';
import { toExport } from './service.js';

type RunDeps = Pick<Dependencies, 'db' | 'boss' | 'log'>;

/** An export whose worker died this many times fails instead of starting again. */
const MAX_ATTEMPTS = 5;
/** Rows per keyset page: the unit of memory of the worker. */
export const PAGE_SIZE = 2000;
const PROGRESS_EVERY_MS = 250;

/** A check of the export (the dead-man's switch), behind new exports (priority 0). */
const check =
  (deps: RunDeps, data: ExportJobData): Watchdog =>
  (seconds) =>
    exportQueue.send(deps.boss, deps.db, data, { startAfter: seconds, priority: 0 });

/** Fails the export and drops every chunk written for it. */
async function fail(conn: Db, tenant: Tenant, found: ExportRow, reason: string): Promise<void> {
  await conn.transaction().execute(async (tx) => {
    await failExport(tx, tenant, found.id, reason);
    await deleteChunksExcept(tx, tenant, found.id, null);
  });
}

/**
 * The watermark shown to people: when the export's snapshot was taken, or `submittedBefore` when that is
 * earlier, never before `submittedAfter`. The rows are chosen by snapshots (repository.ts, Scope), not by it.
 */
function watermarkOf(after: Date | null, before: Date | null, snapshotAt: Date): Date {
  let end = before && before < snapshotAt ? before : snapshotAt;
  if (after && end < after) end = after;
  return end;
}

/** A row as the file shows it: who answered only when the survey shows it (JSON and NDJSON then say `null`). */
function toSource(surveyId: string, row: PageRow, identity: boolean): SourceRow {
  return {
    id: row.id,
    surveyId,
    respondentExternalId: identity ? row.respondent_external_id : null,
    distributionId: row.distribution_id,
    surveyVersion: row.survey_version ?? 1,
    language: row.language,
    answers: row.answers as SourceRow['answers'],
    submittedAt: row.submitted_at,
  };
}

/**
 * Runs (or resumes) one export if no live worker owns it (jobs/owned.ts). `busy`: a live worker holds it;
 * `finished`: nothing (more) to do here.
 */
export async function runExport(deps: RunDeps, data: ExportJobData): Promise<'busy' | 'finished'> {
  const tenant: Tenant = { organizationId: data.organizationId, environment: data.environment };
  return runOwned(
    deps,
    {
      lock: `responses.export:${data.exportId}`,
      async load(conn) {
        const found = await findExport(conn, tenant, data.exportId);
        return found && (found.status === 'pending' || found.status === 'processing') ? found : undefined;
      },
      maxRuns: {
        limit: MAX_ATTEMPTS,
        count: (found) => found.attempts,
        giveUp: (conn, found) =>
          fail(
            conn,
            tenant,
            found,
            `The export stopped after ${MAX_ATTEMPTS} interrupted attempts; start a new export.`,
          ),
      },
      async beginRun(conn, found) {
        const survey = await findSurvey(conn, tenant, found.survey_id);
        if (!survey) {
          await fail(conn, tenant, found, `Survey ${found.survey_id} was deleted before its export was written.`);
          return undefined;
        }
        let first: { watermark: Date; totalRows: number } | null = null;
        if (!found.watermark) {
          // Accepted with a snapshot (every export since snapshots; see the 2026-11-25T0600 migration).
          if (!found.snapshot_at) {
            await fail(conn, tenant, found, `Export ${found.id} has no snapshot; start a new export.`);
            return undefined;
          }
          const watermark = watermarkOf(found.submitted_after, found.submitted_before, found.snapshot_at);
          first = { watermark, totalRows: await countScope(conn, tenant, scopeOf(found)) };
        }
        const job = await beginAttempt(conn, tenant, found.id, first);
        return job && job.watermark ? { job, survey } : undefined;
      },
      watchdog: check(deps, data),
    },
    async (conn, { job, survey }, watchdogId) => {
      await deleteChunksExcept(conn, tenant, job.id, null);

      const attempt = job.attempts;
      const wanted = job.question_ids ? new Set(job.question_ids) : null;
      // Labels and column names in the export's language (the default language's where it lacks a string).
      const translation = job.language ? await findTranslationContent(conn, tenant, survey, job.language) : undefined;
      const { questions } = localizeSurvey(survey, translation);
      const mapper = new AnswerMapper(
        wanted ? questions.filter((q) => wanted.has(q.id)) : questions,
        job.choice_values,
        job.language,
      );
      const identity = showsIdentity(survey.settings);
      const sink = new ChunkSink(deps.db, tenant, job.id, attempt);
      const writer = await createWriter(job.format, sink, mapper, {
        bom: job.bom,
        escapeFormulas: job.escape_formulas,
        identity,
      });
      const scope = scopeOf(job);

      let rows = 0;
      let lastProgress = Date.now();
      let progressSaving: Promise<unknown> | undefined;
      // Read-only, one snapshot: the file is a consistent picture of the scope. The read's snapshot is later than
      // the export's, so it sees every row the export's snapshot sees committed (less those deleted since, which
      // the next export's deletions list names).
      await conn
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (tx) => {
          await openCursor(tx, tenant, scope);
          // One page fetched ahead: the next FETCH runs while this page is formatted and stored (on other connections).
          let next: Promise<PageRow[]> | undefined = fetchPage(tx, PAGE_SIZE);
          while (next) {
            const page: PageRow[] = await next;
            next = page.length === PAGE_SIZE ? fetchPage(tx, PAGE_SIZE) : undefined;
            next?.catch(() => undefined);
            await writer.writeRows(page.map((row) => toSource(job.survey_id, row, identity)));
            rows += page.length;
            // Progress is written beside the export, one update at a time, never waited for.
            if (Date.now() - lastProgress >= PROGRESS_EVERY_MS && !progressSaving) {
              lastProgress = Date.now();
              progressSaving = saveProgress(deps.db, tenant, job.id, attempt, rows)
                .catch((error: unknown) => deps.log.warn({ err: error, exportId: job.id }, 'export progress not saved'))
                .finally(() => (progressSaving = undefined));
            }
          }
        });
      await writer.finish();
      await progressSaving;

      await conn.transaction().execute(async (tx) => {
        const completed = await completeExport(tx, tenant, job.id, attempt, { rowCount: rows, size: sink.written });
        // A newer attempt took over (this one was presumed dead): its file wins, this one is dropped with it.
        if (!completed) return;
        if (watchdogId) await exportQueue.cancel(deps.boss, tx, watchdogId);
        await recordEvent(tx, tenant, 'responses.export.completed', toExport(completed));
      });
      deps.log.info({ exportId: job.id, rows, size: sink.written, attempt }, 'export completed');
    },
  );
}

/** The dead-man's switch: while the export's owner is alive, look again later. */
export async function checkLater(deps: RunDeps, data: ExportJobData): Promise<void> {
  const row = await findExport(
    deps.db,
    { organizationId: data.organizationId, environment: data.environment },
    data.exportId,
  );
  if (row && (row.status === 'processing' || row.status === 'pending')) await checkAgainLater(check(deps, data));
}
