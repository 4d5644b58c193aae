/**
 * Respondents one at a time (read, upsert, delete), sync jobs as the API shows them, and the mapping of stored
 * rows to the contract's Respondent and SyncJob objects.
 */
import type { Selectable } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { Respondent, RespondentUpsert, SyncJob } from '../../generated/openapi.js';
import { ApiError, idOrNotFound, notFound, validationFailed } from '../../http/index.js';
import { iso } from '../../lib/time.js';
import { normalize, recordDetails } from './records.js';
import {
  deleteRespondent as removeRespondent,
  findRespondent,
  listRespondents as selectRespondents,
  writeRespondents,
  type RespondentFilters,
  type RespondentRecord,
} from './repository.js';
import { toProfile } from './profile.js';
import { findSyncJob } from './sync-repository.js';
import type { SyncJobsTable } from './tables.js';

export type { Respondent, SyncJob };

export function toRespondent(row: RespondentRecord): Respondent {
  return {
    externalId: row.external_id,
    email: row.email,
    ...toProfile(row),
    language: row.language,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toSyncJob(row: Selectable<SyncJobsTable>): SyncJob {
  return {
    jobId: row.id,
    status: row.status,
    mode: row.mode,
    dryRun: row.dry_run,
    progress: row.progress,
    stats: {
      totalRecords: row.total_records,
      created: row.created_count,
      updated: row.updated_count,
      skipped: row.skipped_count,
      errors: row.error_count,
      deleted: row.deleted_count,
    },
    errors: row.errors,
    startedAt: iso(row.started_at),
    completedAt: iso(row.completed_at),
    failureReason: row.failure_reason,
    createdAt: iso(row.created_at),
  };
}

export async function listRespondents(
  db: DbOrTx,
  tenant: Tenant,
  filters: RespondentFilters,
  page: { limit: number; offset: number },
): Promise<{ respondents: Respondent[]; total: number }> {
  const { rows, total } = await selectRespondents(db, tenant, filters, page);
  return { respondents: rows.map(toRespondent), total };
}

export async function getRespondent(db: DbOrTx, tenant: Tenant, externalId: string): Promise<Respondent> {
  const row = await findRespondent(db, tenant, externalId);
  if (!row) throw notFound('respondent', externalId);
  return toRespondent(row);
}

/**
 * Creates or replaces one respondent; `created` tells which (201 or 200). `scimUsers: 'by caller'`: SCIM, which
 * writes the respondent's user itself (repository.ts `writeRespondents`).
 */
export async function upsertRespondent(
  db: Db,
  tenant: Tenant,
  externalId: string,
  body: RespondentUpsert,
  scimUsers: 'here' | 'by caller' = 'here',
): Promise<{ respondent: Respondent; created: boolean }> {
  if (externalId.length > 255) throw notFound('respondent', externalId);
  if (body.externalId !== undefined && body.externalId !== externalId) {
    throw new ApiError(400, 'validation_failed', 'The request is invalid: 1 problem found.', [
      { path: '/body/externalId', message: 'must equal the externalId in the path', code: 'invalid_value' },
    ]);
  }
  // The one record validator of PUT and sync (records.ts): a record stored here is stored the same by a sync.
  const problems = recordDetails({ ...body, externalId });
  if (problems.length > 0) throw validationFailed(problems);
  const record = normalize({ ...body, externalId });
  // The write and the read in one transaction: the row the upsert wrote stays locked until it is read, so a
  // concurrent DELETE or replace sync cannot remove it in between. An unchanged record is not written (and not
  // locked): if a concurrent deletion removed it meanwhile, the upsert runs again and creates it.
  for (let attempt = 1; ; attempt++) {
    const written = await db.transaction().execute(async (tx) => {
      const { created } = await writeRespondents(tx, tenant, [record], 'upsert', 'throw', undefined, scimUsers);
      const row = await findRespondent(tx, tenant, externalId);
      return row && { respondent: toRespondent(row), created: created === 1 };
    });
    if (written) return written;
    if (attempt === 3) throw new Error('respondent vanished right after its upsert, three times');
  }
}

export async function deleteRespondent(db: DbOrTx, tenant: Tenant, externalId: string): Promise<void> {
  if (!(await removeRespondent(db, tenant, externalId))) throw notFound('respondent', externalId);
}

export async function getSyncJob(db: DbOrTx, tenant: Tenant, jobId: string): Promise<SyncJob> {
  idOrNotFound('job', 'sync job', jobId);
  const row = await findSyncJob(db, tenant, jobId);
  if (!row) throw notFound('sync job', jobId);
  return toSyncJob(row);
}
