/** Maps stored rows to the contract's Respondent and SyncJob objects. */
import type { Selectable } from 'kysely';
import type { components } from '../../generated/openapi.js';
import { iso } from '../../lib/time.js';
import type { RespondentRecord } from './repository.js';
import type { SyncJobsTable } from './tables.js';

export type Respondent = components['schemas']['Respondent'];
export type SyncJob = components['schemas']['SyncJob'];

export function toRespondent(row: RespondentRecord): Respondent {
  return {
    externalId: row.external_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    department: row.department,
    location: row.location,
    jobTitle: row.job_title,
    managerId: row.manager_id,
    hireDate: row.hire_date,
    employmentType: row.employment_type,
    attributes: row.attributes as Respondent['attributes'],
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
