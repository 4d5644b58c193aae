/** Respondent and sync operations: one handler per operationId. */
import { ApiError, notFound, validationFailed } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { isId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { normalize, recordDetails } from './records.js';
import {
  deleteRespondent as removeRespondent,
  findRespondent,
  listRespondents as selectRespondents,
  writeRespondents,
} from './repository.js';
import { toRespondent, toSyncJob } from './service.js';
import { findSyncJob } from './sync-repository.js';
import { startSync } from './sync-service.js';

export const listRespondents: Handler<'listRespondents'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { page: _page, pageSize: _pageSize, ...filters } = query;
  const { rows, total } = await selectRespondents(deps.db, tenantOf(auth), filters, {
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: rows.map(toRespondent), pagination: paginationOf(page, total) };
};

export const getRespondent: Handler<'getRespondent'> = async ({ params, auth, deps }) => {
  const row = await findRespondent(deps.db, tenantOf(auth), params.externalId);
  if (!row) throw notFound('respondent', params.externalId);
  return { status: 200, data: toRespondent(row) };
};

export const upsertRespondent: Handler<'upsertRespondent'> = async ({ params, body, auth, deps }) => {
  const { externalId } = params;
  if (externalId.length > 255) throw notFound('respondent', externalId);
  if (body.externalId !== undefined && body.externalId !== externalId) {
    throw new ApiError(400, 'validation_failed', 'The request is invalid: 1 problem found.', [
      { path: '/body/externalId', message: 'must equal the externalId in the path', code: 'invalid_value' },
    ]);
  }
  // The one record validator of PUT and sync (records.ts): a record stored here is stored the same by a sync.
  const problems = recordDetails({ ...body, externalId });
  if (problems.length > 0) throw validationFailed(problems);
  const tenant = tenantOf(auth);
  const { created } = await writeRespondents(deps.db, tenant, [normalize({ ...body, externalId })], 'upsert');
  const row = await findRespondent(deps.db, tenant, externalId);
  if (!row) throw new Error('respondent vanished right after its upsert');
  return created === 1 ? { status: 201, data: toRespondent(row) } : { status: 200, data: toRespondent(row) };
};

export const deleteRespondent: Handler<'deleteRespondent'> = async ({ params, auth, deps }) => {
  if (!(await removeRespondent(deps.db, tenantOf(auth), params.externalId)))
    throw notFound('respondent', params.externalId);
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

export const getSyncJob: Handler<'getSyncJob'> = async ({ params, auth, deps }) => {
  if (!isId('job', params.jobId)) throw notFound('sync job', params.jobId);
  const row = await findSyncJob(deps.db, tenantOf(auth), params.jobId);
  if (!row) throw notFound('sync job', params.jobId);
  return { status: 200, data: toSyncJob(row) };
};
