/** Distribution operations: one handler per operationId. */
import { notFound } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { isId } from '../../lib/ids.js';
import * as surveys from '../surveys/index.js';
import * as repo from './repository.js';
import * as service from './service.js';
import { linkKeyOf } from './tokens.js';

/** Malformed ids are answered like unknown ones, without a query. */
function surveyIdOrThrow(id: string): string {
  if (!isId('srv', id)) throw notFound('survey', id);
  return id;
}
function distributionIdOrThrow(id: string): string {
  if (!isId('dst', id)) throw notFound('distribution', id);
  return id;
}

export const distributeSurvey: Handler<'distributeSurvey'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await service.distributeSurvey(deps, tenantOf(auth), surveyIdOrThrow(params.surveyId), body),
});

export const previewDistribution: Handler<'previewDistribution'> = async ({ params, body, auth, deps }) => {
  return {
    status: 200,
    data: await service.previewDistribution(deps.db, tenantOf(auth), surveyIdOrThrow(params.surveyId), body.targeting),
  };
};

export const listDistributions: Handler<'listDistributions'> = async ({ params, query, auth, deps }) => {
  const tenant = tenantOf(auth);
  const surveyId = surveyIdOrThrow(params.surveyId);
  if (!(await surveys.findSurvey(deps.db, tenant, surveyId))) throw notFound('survey', surveyId);
  const page = pageRequest(query);
  const { rows, total } = await repo.listDistributions(deps.db, tenant, surveyId, {
    limit: page.pageSize,
    offset: page.offset,
  });
  const data = await Promise.all(rows.map((row) => service.presentDistribution(deps.db, deps.config, tenant, row)));
  return { status: 200, data, pagination: paginationOf(page, total) };
};

export const getDistribution: Handler<'getDistribution'> = async ({ params, auth, deps }) => {
  const tenant = tenantOf(auth);
  const row = await service.findDistributionOrThrow(
    deps.db,
    tenant,
    surveyIdOrThrow(params.surveyId),
    distributionIdOrThrow(params.distributionId),
  );
  return { status: 200, data: await service.presentDistribution(deps.db, deps.config, tenant, row) };
};

export const listDistributionRecipients: Handler<'listDistributionRecipients'> = async ({
  params,
  query,
  auth,
  deps,
}) => {
  const tenant = tenantOf(auth);
  const distribution = await service.findDistributionOrThrow(
    deps.db,
    tenant,
    surveyIdOrThrow(params.surveyId),
    distributionIdOrThrow(params.distributionId),
  );
  const page = pageRequest(query);
  const { rows, total } = await repo.listRecipients(deps.db, tenant, distribution.id, {
    status: query.status,
    limit: page.pageSize,
    offset: page.offset,
  });
  const key = await linkKeyOf(deps.db, deps.config.linkSecret);
  return {
    status: 200,
    data: rows.map((row) => service.toRecipient(row, distribution, deps.config, key)),
    pagination: paginationOf(page, total),
  };
};
