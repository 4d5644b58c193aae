/** Distribution operations: one handler per operationId. */
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { recipientsCsv } from './recipients-csv.js';
import * as service from './service.js';

export const distributeSurvey: Handler<'distributeSurvey'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await service.distributeSurvey(deps, tenantOf(auth), service.surveyIdOrThrow(params.surveyId), body),
});

export const previewDistribution: Handler<'previewDistribution'> = async ({ params, body, auth, deps }) => ({
  status: 200,
  data: await service.previewDistribution(
    deps.db,
    tenantOf(auth),
    service.surveyIdOrThrow(params.surveyId),
    body.targeting,
  ),
});

export const listDistributions: Handler<'listDistributions'> = async ({ params, query, auth, deps }) => {
  const page = pageRequest(query);
  const { distributions, total } = await service.listDistributions(
    deps.db,
    deps.config,
    tenantOf(auth),
    params.surveyId,
    { limit: page.pageSize, offset: page.offset },
  );
  return { status: 200, data: distributions, pagination: paginationOf(page, total) };
};

export const getDistribution: Handler<'getDistribution'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.getDistribution(deps.db, deps.config, tenantOf(auth), params.surveyId, params.distributionId),
});

export const listDistributionRecipients: Handler<'listDistributionRecipients'> = async ({
  params,
  query,
  auth,
  deps,
}) => {
  const page = pageRequest(query);
  const { recipients, total } = await service.listRecipients(deps.db, deps.config, tenantOf(auth), params, {
    status: query.status,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: recipients, pagination: paginationOf(page, total) };
};

export const downloadDistributionRecipients: Handler<'downloadDistributionRecipients'> = async ({
  params,
  query,
  auth,
  deps,
}) => {
  const file = await recipientsCsv(deps.db, deps.config, tenantOf(auth), params, query.status);
  // The name only holds id characters, so the quoted form the contract shows is always exact.
  const headers = { 'Content-Disposition': `attachment; filename="${file.filename}"` };
  return { status: 200, raw: { contentType: 'text/csv; charset=utf-8', body: file.body, headers } };
};
