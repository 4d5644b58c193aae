/** Privacy request operations: one handler per operationId. */
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import * as service from './service.js';

export const createPrivacyRequest: Handler<'createPrivacyRequest'> = async ({ body, auth, deps }) => ({
  status: 202,
  data: await service.createRequest(deps, tenantOf(auth), body),
});

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

export const downloadPrivacyRequest: Handler<'downloadPrivacyRequest'> = async ({ params, auth, deps, headers }) => {
  const file = await service.accessFile(deps.db, tenantOf(auth), params.id, {
    range: headers.range,
    ifRange: headers['if-range'],
  });
  return { status: file.status, raw: { contentType: file.contentType, body: file.body, headers: file.headers } };
};
