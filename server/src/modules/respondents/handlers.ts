/** Respondent and sync operations: one handler per operationId. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import { iso } from '../../lib/time.js';
import { auditRead } from '../audit/index.js';
import * as service from './service.js';
import { startSync } from './sync-service.js';

export const listRespondents: Handler<'listRespondents'> = async (input) => {
  const { query, auth, deps } = input;
  const page = pageRequest(query);
  const { page: _page, pageSize: _pageSize, ...filters } = query;
  const { respondents, total } = await service.listRespondents(deps.db, tenantOf(auth), filters, {
    limit: page.pageSize,
    offset: page.offset,
  });
  if (respondents.length > 0)
    await auditRead(input, {
      action: 'respondents.read',
      target: { type: 'respondents', id: null },
    });
  return { status: 200, data: respondents, pagination: paginationOf(page, total) };
};

export const getRespondent: Handler<'getRespondent'> = async (input) => {
  const { params, auth, deps } = input;
  const respondent = await service.getRespondent(deps.db, tenantOf(auth), params.externalId);
  await auditRead(input, {
    action: 'respondents.read',
    target: { type: 'respondent', id: respondent.externalId },
  });
  return { status: 200, data: respondent };
};

export const upsertRespondent: Handler<'upsertRespondent'> = async ({ params, body, auth, deps }) => {
  const { respondent, created } = await service.upsertRespondent(deps.db, tenantOf(auth), params.externalId, body);
  return created ? { status: 201, data: respondent } : { status: 200, data: respondent };
};

export const deleteRespondent: Handler<'deleteRespondent'> = async ({ params, auth, deps }) => {
  await service.deleteRespondent(deps.db, tenantOf(auth), params.externalId);
  return { status: 200, data: { id: params.externalId, deleted: true } };
};

export const startRespondentSync: Handler<'startRespondentSync'> = async ({ body, auth, deps }) => {
  const accepted = await startSync(deps, tenantOf(auth), {
    mode: body.mode,
    // Defaults are not applied by the validator everywhere; fill them here.
    dryRun: body.dryRun ?? false,
    records: body.respondents,
  });
  return {
    status: 202,
    data: {
      jobId: accepted.jobId,
      status: accepted.status,
      totalRecords: accepted.totalRecords,
      estimatedCompletionTime: iso(accepted.estimatedCompletionTime),
      dryRun: body.dryRun ?? false,
    },
  };
};

export const getSyncJob: Handler<'getSyncJob'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.getSyncJob(deps.db, tenantOf(auth), params.jobId),
});
