/** Privacy request operations: one handler per operationId. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import { auditRead, auditSourceOf, recordAudit } from '../audit/index.js';
import * as service from './service.js';

export const createPrivacyRequest: Handler<'createPrivacyRequest'> = async (input) => {
  const { body, auth, deps } = input;
  const source = auditSourceOf(input);
  const request = await service.createRequest(deps, tenantOf(auth), body, (tx, id) =>
    recordAudit(tx, source, { action: 'privacy_request.created', target: { type: 'privacy_request', id } }),
  );
  return { status: 202, data: request };
};

export const getPrivacyRequest: Handler<'getPrivacyRequest'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.getRequest(deps.db, tenantOf(auth), params.id),
});

export const listPrivacyRequests: Handler<'listPrivacyRequests'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { requests, total } = await service.listPrivacyRequests(deps.db, tenantOf(auth), {
    type: query?.type,
    status: query?.status,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: requests, pagination: paginationOf(page, total) };
};

export const downloadPrivacyRequest: Handler<'downloadPrivacyRequest'> = async (input) => {
  const { params, auth, deps, headers } = input;
  const file = await service.accessFile(deps.db, tenantOf(auth), params.id, {
    range: headers.range,
    ifRange: headers['if-range'],
  });
  await auditRead(input, {
    action: 'privacy_request.downloaded',
    target: { type: 'privacy_request', id: params.id },
  });
  return { status: file.status, raw: { contentType: file.contentType, body: file.body, headers: file.headers } };
};
