/** Export operations: one handler per operationId. */
import { ApiError, invalidState } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { fileStream, parseRange } from './download.js';
import { mediaTypes } from './formats.js';
import { listDeletions, scopeOf } from './repository.js';
import { findExportOrThrow, startExport, toExport } from './service.js';

export const exportResponses: Handler<'exportResponses'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await startExport(deps, tenantOf(auth), params.id, body),
});

export const getExport: Handler<'getExport'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: toExport(await findExportOrThrow(deps.db, tenantOf(auth), params.exportId)),
});

export const downloadExport: Handler<'downloadExport'> = async ({ params, auth, deps, headers }) => {
  const tenant = tenantOf(auth);
  const row = await findExportOrThrow(deps.db, tenant, params.exportId);
  if (row.status !== 'completed' || row.file_attempt === null || row.size === null) {
    throw invalidState(
      row.status === 'failed'
        ? `Export ${row.id} failed: it has no file.`
        : `Export ${row.id} is ${row.status}; download it once it is completed.`,
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
  const ifRange = headers['if-range'];
  const range =
    ifRange === undefined || ifRange === etag ? parseRange(headers.range, size) : ({ kind: 'full' } as const);
  if (range.kind === 'unsatisfiable') {
    throw new ApiError(
      416,
      'range_not_satisfiable',
      `The range ${headers.range} is outside the file (${size} bytes).`,
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
    raw: {
      contentType: mediaTypes[row.format],
      body: fileStream(deps.db, tenant, row.id, row.file_attempt, start, end),
      headers: range.kind === 'partial' ? { ...common, 'Content-Range': `bytes ${start}-${end}/${size}` } : common,
    },
  };
};

export const listExportDeletions: Handler<'listExportDeletions'> = async ({ params, query, auth, deps }) => {
  const tenant = tenantOf(auth);
  const row = await findExportOrThrow(deps.db, tenant, params.exportId);
  if (!row.watermark)
    throw invalidState(`Export ${row.id} is ${row.status}; its window is fixed once it starts processing.`);
  const page = pageRequest(query);
  const { rows, total } = await listDeletions(deps.db, tenant, scopeOf(row), page.pageSize, page.offset);
  return {
    status: 200,
    data: rows.map((d) => ({
      responseId: d.response_id,
      surveyId: d.survey_id,
      deletedAt: d.deleted_at.toISOString(),
    })),
    pagination: paginationOf(page, total),
  };
};
