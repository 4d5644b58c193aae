/**
 * Export rules: validating a request, accepting it (row and queue entry in one transaction), and mapping rows to
 * the contract's `Export`.
 */
import type PgBoss from 'pg-boss';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { Export, ExportDeletion, ExportRequest } from '../../generated/openapi.js';
import { ApiError, invalidState, notFound, validationFailed, type ErrorDetail } from '../../http/index.js';
import { isId, newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { findSurvey, listedLanguage, offeredLanguages } from '../surveys/index.js';
import type { Readable } from 'node:stream';
import { fileStream, parseRange } from './download.js';
import { mediaTypes } from './formats.js';
import { exportQueue, type ExportJobData } from './queue.js';
import { findExport, insertExport, listDeletions, scopeOf, type ExportRow, type NewExport } from './repository.js';

export type { Export, ExportDeletion };

export function toExport(row: ExportRow): Export {
  const completed = row.status === 'completed';
  const progress = completed
    ? 100
    : row.total_rows
      ? Math.min(99, Math.floor((row.rows_written * 100) / row.total_rows))
      : 0;
  return {
    id: row.id,
    surveyId: row.survey_id,
    format: row.format,
    status: row.status,
    progress,
    rowCount: completed ? row.row_count : null,
    size: completed ? row.size : null,
    submittedAfter: iso(row.submitted_after),
    submittedBefore: iso(row.submitted_before),
    watermark: iso(row.watermark),
    downloadUrl: completed ? `/api/v1/exports/${row.id}/download` : null,
    error: row.status === 'failed' ? row.error : null,
    createdAt: row.created_at.toISOString(),
    completedAt: iso(row.completed_at),
    expiresAt: iso(row.expires_at),
  };
}

export async function findExportOrThrow(db: Db, tenant: Tenant, id: string): Promise<ExportRow> {
  const row = isId('exp', id) ? await findExport(db, tenant, id) : undefined;
  if (!row) throw notFound('export', id);
  return row;
}

export async function startExport(
  deps: { db: Db; boss: PgBoss },
  tenant: Tenant,
  surveyId: string,
  body: ExportRequest,
): Promise<Export> {
  const { db } = deps;
  const survey = isId('srv', surveyId) ? await findSurvey(db, tenant, surveyId) : undefined;
  if (!survey) throw notFound('survey', surveyId);

  const problems: ErrorDetail[] = [];
  let submittedAfter = body.submittedAfter === undefined ? null : new Date(body.submittedAfter);
  const submittedBefore = body.submittedBefore === undefined ? null : new Date(body.submittedBefore);
  let previous: NewExport['previous'] = null;
  if (body.sinceExport !== undefined) {
    if (body.submittedAfter !== undefined) {
      problems.push({
        path: '/body/sinceExport',
        code: 'invalid_value',
        message: 'give either sinceExport or submittedAfter, not both',
      });
    } else {
      const base = isId('exp', body.sinceExport) ? await findExport(db, tenant, body.sinceExport) : undefined;
      if (!base || base.survey_id !== surveyId) {
        problems.push({
          path: '/body/sinceExport',
          code: 'not_found',
          message: `no export ${body.sinceExport} of survey ${surveyId} exists`,
        });
      } else if (base.status !== 'completed' || !base.watermark) {
        problems.push({
          path: '/body/sinceExport',
          code: 'invalid_value',
          message: `export ${body.sinceExport} is ${base.status}; continue only after a completed export`,
        });
      } else if (base.snapshot === null) {
        // Accepted before exports had snapshots: it covered a time window, so continue from its end.
        submittedAfter = base.watermark;
      } else {
        // The chain keeps its start and leaves out what the previous export covered (see repository.ts, Scope).
        submittedAfter = base.submitted_after;
        previous = { snapshot: base.snapshot, before: base.submitted_before };
        // What the chain covered must stay one (snapshot, end) pair: an increment never ends before its predecessor.
        if (submittedBefore && (base.submitted_before === null || submittedBefore < base.submitted_before)) {
          problems.push({
            path: '/body/submittedBefore',
            code: 'out_of_range',
            message:
              base.submitted_before === null
                ? `export ${base.id} had no submittedBefore; an export continuing it cannot have one`
                : `must not be earlier than the submittedBefore of export ${base.id} (${base.submitted_before.toISOString()})`,
          });
        }
      }
    }
  }
  if (submittedAfter && submittedBefore && submittedBefore <= submittedAfter) {
    problems.push({
      path: '/body/submittedBefore',
      code: 'out_of_range',
      message: `must be later than submittedAfter (${submittedAfter.toISOString()})`,
    });
  }
  const known = new Set(survey.questions.map((q) => q.id));
  body.questionIds?.forEach((id, index) => {
    if (!known.has(id))
      problems.push({
        path: `/body/questionIds/${index}`,
        code: 'not_found',
        message: `survey ${surveyId} has no question ${id}`,
      });
  });
  const language = body.language === undefined ? null : (listedLanguage(survey.languages, body.language) ?? null);
  if (body.language !== undefined && language === null) {
    problems.push({
      path: '/body/language',
      code: 'not_found',
      message: `survey ${surveyId} is not offered in ${body.language} (its languages: ${offeredLanguages(survey.languages)})`,
    });
  }
  if (body.bom === true && body.format !== 'csv') {
    problems.push({
      path: '/body/bom',
      code: 'invalid_value',
      message: 'a byte order mark is only written to csv files',
    });
  }
  // Refused with any value, not only `true`: a caller who sends it with another format believes that file is
  // (or is not) escaped, and neither is the case (JSON and NDJSON hold raw values; XLSX writes text cells). The
  // contract gives it no `default` keyword, so the request validator leaves an absent field absent.
  if (body.escapeFormulas !== undefined && body.format !== 'csv') {
    problems.push({
      path: '/body/escapeFormulas',
      code: 'invalid_value',
      message: `formula escaping applies to csv files only; remove it for ${body.format}`,
    });
  }
  if (problems.length > 0) throw validationFailed(problems);

  const row = await db.transaction().execute(async (tx) => {
    const inserted = await insertExport(tx, tenant, {
      id: newId('exp'),
      surveyId,
      format: body.format,
      questionIds: body.questionIds ?? null,
      choiceValues: body.choiceValues ?? 'ids',
      language,
      bom: body.bom ?? false,
      escapeFormulas: body.escapeFormulas ?? true,
      submittedAfter,
      submittedBefore,
      previous,
    });
    const data: ExportJobData = {
      exportId: inserted.id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
    };
    await exportQueue.send(deps.boss, tx, data, { priority: 1 });
    return inserted;
  });
  return toExport(row);
}

/** What a download sends: the whole file (200) or one byte range of it (206), with its headers. */
export interface ExportFile {
  status: 200 | 206;
  contentType: string;
  body: Readable;
  headers: Record<string, string>;
}

/**
 * The file of a completed export, whole or one range (`Range`, honoured only while `If-Range` still names this
 * file's ETag). 409 before it is completed, 410 once it expired, 416 for a range outside it.
 */
export async function exportFile(
  db: Db,
  tenant: Tenant,
  id: string,
  request: { range: string | undefined; ifRange: string | undefined },
): Promise<ExportFile> {
  const row = await findExportOrThrow(db, tenant, id);
  if (row.status !== 'completed' || row.file_attempt === null || row.size === null) {
    throw invalidState(
      row.status === 'failed'
        ? `Export ${row.id} failed: it has no file.`
        : `Export ${row.id} is ${row.status}; download it once it is completed.`,
    );
  }
  if (row.file_erased_at) {
    throw new ApiError(
      410,
      'export_erased',
      row.file_erased_by?.startsWith('ret_')
        ? `The file of export ${row.id} was deleted by retention run ${row.file_erased_by}: it held responses the retention policy removed; start a new export.`
        : `The file of export ${row.id} was deleted by privacy request ${row.file_erased_by} (an erasure); start a new export.`,
    );
  }
  if (row.file_deleted_at || (row.expires_at && row.expires_at.getTime() <= Date.now())) {
    throw new ApiError(
      410,
      'export_expired',
      `The file of export ${row.id} expired at ${row.expires_at?.toISOString()}; start a new export.`,
    );
  }
  const size = row.size;
  const etag = `"${row.id}-${row.file_attempt}"`;
  const range =
    request.ifRange === undefined || request.ifRange === etag
      ? parseRange(request.range, size)
      : ({ kind: 'full' } as const);
  if (range.kind === 'unsatisfiable') {
    throw new ApiError(
      416,
      'range_not_satisfiable',
      `The range ${request.range} is outside the file (${size} bytes).`,
      undefined,
      { 'Content-Range': `bytes */${size}` },
    );
  }
  const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, size - 1];
  // Ids and the format are plain ASCII, so the quoted form needs no RFC 5987 encoding.
  const common = {
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Content-Length': String(end - start + 1),
    'Content-Disposition': `attachment; filename="survey-${row.survey_id}-${row.id}.${row.format}"`,
  };
  return {
    status: range.kind === 'partial' ? 206 : 200,
    contentType: mediaTypes[row.format],
    body: fileStream(db, tenant, row.id, row.file_attempt, start, end),
    headers: range.kind === 'partial' ? { ...common, 'Content-Range': `bytes ${start}-${end}/${size}` } : common,
  };
}

/** The responses deleted within an export's window since it was taken (its window is fixed once it starts). */
export async function listExportDeletions(
  db: Db,
  tenant: Tenant,
  id: string,
  page: { limit: number; offset: number },
): Promise<{ deletions: ExportDeletion[]; total: number }> {
  const row = await findExportOrThrow(db, tenant, id);
  if (!row.watermark) {
    throw invalidState(`Export ${row.id} is ${row.status}; its window is fixed once it starts processing.`);
  }
  const { rows, total } = await listDeletions(db, tenant, scopeOf(row), page.limit, page.offset);
  const deletions = rows.map((d) => ({
    responseId: d.response_id,
    surveyId: d.survey_id,
    deletedAt: d.deleted_at.toISOString(),
  }));
  return { deletions, total };
}
