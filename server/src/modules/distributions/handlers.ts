/** Distribution operations: one handler per operationId. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import { auditRead } from '../audit/index.js';
import { recipientsCsv } from './recipients-csv.js';
import * as service from './service.js';

export const distributeSurvey: Handler<'distributeSurvey'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await service.distributeSurvey(deps, tenantOf(auth), service.surveyIdOrThrow(params.surveyId), body),
});

export const previewDistribution: Handler<'previewDistribution'> = async (input) => {
  const { params, body, auth, deps } = input;
  const preview = await service.previewDistribution(
    deps.db,
    tenantOf(auth),
    service.surveyIdOrThrow(params.surveyId),
    body.targeting,
  );
  // The sample shows people: a read of respondents, like their list.
  if (preview.sample.length > 0)
    await auditRead(input, { action: 'respondents.read', target: { type: 'respondents', id: null } });
  return { status: 200, data: preview };
};

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

export const listDistributionRecipients: Handler<'listDistributionRecipients'> = async (input) => {
  const { params, query, auth, deps } = input;
  const page = pageRequest(query);
  const { recipients, total } = await service.listRecipients(deps.db, deps.config, tenantOf(auth), params, {
    status: query.status,
    limit: page.pageSize,
    offset: page.offset,
  });
  if (recipients.length > 0)
    await auditRead(input, { action: 'recipients.read', target: { type: 'distribution', id: params.distributionId } });
  return { status: 200, data: recipients, pagination: paginationOf(page, total) };
};

export const downloadDistributionRecipients: Handler<'downloadDistributionRecipients'> = async (input) => {
  const { params, query, auth, deps } = input;
  const file = await recipientsCsv(deps.db, deps.config, tenantOf(auth), params, query.status);
  await auditRead(input, { action: 'recipients.read', target: { type: 'distribution', id: params.distributionId } });
  // The name only holds id characters, so the quoted form the contract shows is always exact.
  const headers = { 'Content-Disposition': `attachment; filename="${file.filename}"` };
  return { status: 200, raw: { contentType: 'text/csv; charset=utf-8', body: file.body, headers } };
};
