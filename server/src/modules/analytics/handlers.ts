/** Analytics operations: one handler per operationId, thin adapters from the contract to the service. */
import { notFound } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { isId } from '../../lib/ids.js';
import { auditSourceOf, recordAudit } from '../audit/index.js';
import * as service from './service.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { getSmartAnalytics as smartAnalytics } from './smart.js';
import { listQuestionTrends as questionTrends } from './trends.js';

const { surveyIdOrThrow } = service;

/** Malformed distribution ids are unknown ones (the service checks that a well-formed one is the survey's). */
function distributionIdOrThrow(id: string | undefined): string | undefined {
  if (id === undefined || isId('dst', id)) return id;
  throw notFound('distribution', id);
}

export const getStaticAnalytics: Handler<'getStaticAnalytics'> = async ({ params, query, auth, deps }) => ({
  status: 200,
  data: await service.getStaticAnalytics(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), {
    submittedAfter: query.submittedAfter,
    submittedBefore: query.submittedBefore,
    distributionId: distributionIdOrThrow(query.distributionId),
    segmentBy: query.segmentBy,
    manager: query.manager,
    filters: query.filters,
    outcomeQuestionId: query.outcomeQuestionId,
  }),
});

export const getSmartAnalytics: Handler<'getSmartAnalytics'> = async ({ params, query, auth, deps }) => ({
  status: 200,
  data: await smartAnalytics(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), {
    submittedAfter: query.submittedAfter,
    submittedBefore: query.submittedBefore,
    distributionId: distributionIdOrThrow(query.distributionId),
    segmentBy: query.segmentBy,
    manager: query.manager,
    filters: query.filters,
    outcomeQuestionId: query.outcomeQuestionId,
    heatmapMetric: query.heatmapMetric,
    compareTo: query.compareTo,
  }),
});

export const listQuestionTrends: Handler<'listQuestionTrends'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { points, total } = await questionTrends(deps.db, tenantOf(auth), {
    questionKey: query.questionKey,
    from: query.from,
    to: query.to,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: points, pagination: paginationOf(page, total) };
};

export const getAnalyticsSettings: Handler<'getAnalyticsSettings'> = async ({ auth, deps }) => ({
  status: 200,
  data: await service.getSettings(deps.db, tenantOf(auth)),
});

export const updateAnalyticsSettings: Handler<'updateAnalyticsSettings'> = async (input) => {
  const { body, auth, deps } = input;
  // The settings and their audit entry commit together; a change that changes nothing writes no entry.
  const settings = await deps.db.transaction().execute(async (tx) => {
    const before = await service.getSettings(tx, tenantOf(auth));
    const saved = await service.updateSettings(tx, tenantOf(auth), body);
    if (saved.anonymityThreshold !== before.anonymityThreshold)
      await recordAudit(tx, auditSourceOf(input), {
        action: 'settings.updated',
        target: { type: 'settings', id: 'analytics' },
      });
    return saved;
  });
  return { status: 200, data: settings };
};
