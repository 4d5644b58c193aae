/** Analytics operations: one handler per operationId, thin adapters from the contract to the services. */
import { notFound, pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import { isId } from '../../lib/ids.js';
import { auditSourceOf, recordAudit } from '../audit/index.js';
import { surveyIdOrThrow } from '../surveys/index.js';
import { getSettings, updateSettings } from './settings.js';
import { getSmartAnalytics as smartAnalytics } from './smart.js';
import { getStaticAnalytics as staticAnalytics } from './static.js';
import { listQuestionTrends as questionTrends } from './trends.js';

/** Malformed distribution ids are unknown ones (the service checks that a well-formed one is the survey's). */
function distributionIdOrThrow(id: string | undefined): string | undefined {
  if (id === undefined || isId('dst', id)) return id;
  throw notFound('distribution', id);
}

export const getStaticAnalytics: Handler<'getStaticAnalytics'> = async ({ params, query, auth, deps }) => ({
  status: 200,
  data: await staticAnalytics(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), {
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
  data: await getSettings(deps.db, tenantOf(auth)),
});

export const updateAnalyticsSettings: Handler<'updateAnalyticsSettings'> = async (input) => {
  const { body, auth, deps } = input;
  // The settings and their audit entry commit together; a change that changes nothing writes no entry.
  const settings = await deps.db.transaction().execute(async (tx) => {
    const before = await getSettings(tx, tenantOf(auth));
    const saved = await updateSettings(tx, tenantOf(auth), body);
    if (saved.anonymityThreshold !== before.anonymityThreshold)
      await recordAudit(tx, auditSourceOf(input), {
        action: 'settings.updated',
        target: { type: 'settings', id: 'analytics' },
      });
    return saved;
  });
  return { status: 200, data: settings };
};
