/** Export operations: one handler per operationId. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import { auditRead } from '../audit/index.js';
import * as service from './service.js';

export const exportResponses: Handler<'exportResponses'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await service.startExport(deps, tenantOf(auth), params.id, body),
});

export const getExport: Handler<'getExport'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: service.toExport(await service.findExportOrThrow(deps.db, tenantOf(auth), params.exportId)),
});

export const downloadExport: Handler<'downloadExport'> = async (input) => {
  const { params, auth, deps, headers } = input;
  const file = await service.exportFile(deps.db, tenantOf(auth), params.exportId, {
    range: headers.range,
    ifRange: headers['if-range'],
  });
  await auditRead(input, {
    action: 'export.downloaded',
    target: { type: 'export', id: params.exportId },
  });
  return { status: file.status, raw: { contentType: file.contentType, body: file.body, headers: file.headers } };
};

export const listExportDeletions: Handler<'listExportDeletions'> = async ({ params, query, auth, deps }) => {
  const page = pageRequest(query);
  const { deletions, total } = await service.listExportDeletions(deps.db, tenantOf(auth), params.exportId, {
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: deletions, pagination: paginationOf(page, total) };
};
