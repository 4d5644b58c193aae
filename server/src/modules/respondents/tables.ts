/** Tables of the respondents module: respondents, sync jobs and the stored batches of sync requests. */
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment, NullableTimestamp, Timestamp } from '../../db/columns.js';

export type EmploymentType = 'full_time' | 'part_time' | 'contractor' | 'temporary' | 'intern';
export type SyncMode = 'upsert' | 'replace' | 'append';
export type SyncStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface SyncRecordError {
  index: number;
  externalId: string | null;
  message: string;
  /** The ErrorDetail code PUT answers for the same problem (absent on errors recorded before codes were kept). */
  code?: string;
  path?: string;
}

export interface RespondentsTable {
  organization_id: string;
  environment: Environment;
  external_id: string;
  /** Null for a person without an e-mail address: reached by link, QR code or kiosk code, never mailed. */
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  department: string | null;
  location: string | null;
  job_title: string | null;
  manager_id: string | null;
  /** `date`; read it as text (`hire_date::text`) so no time zone ever shifts it. */
  hire_date: ColumnType<string | null, string | null, string | null>;
  employment_type: EmploymentType | null;
  attributes: ColumnType<Record<string, unknown>, string, string>;
  /** Preferred language (BCP 47), as sent; null when unknown. */
  language: ColumnType<string | null, string | null | undefined, string | null>;
  content_hash: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SyncJobsTable {
  id: string;
  organization_id: string;
  environment: Environment;
  mode: SyncMode;
  dry_run: boolean;
  status: SyncStatus;
  total_records: number;
  processed_records: Generated<number>;
  processed_batches: Generated<number>;
  progress: Generated<number>;
  created_count: Generated<number>;
  updated_count: Generated<number>;
  skipped_count: Generated<number>;
  error_count: Generated<number>;
  deleted_count: Generated<number>;
  errors: ColumnType<SyncRecordError[], string | undefined, string>;
  failure_reason: string | null;
  attempts: Generated<number>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
}

export interface SyncJobBatchesTable {
  organization_id: string;
  environment: Environment;
  job_id: string;
  batch_no: number;
  /** JSON text of an array of records. */
  records: ColumnType<string, string, never>;
  superseded: number[];
  /**
   * Errors of the batch's records that could not be stored as JSON (`UnsendableRecord`s: too deep, a number beyond
   * float64), found when the request was accepted; their places in `records` hold `null`.
   */
  unsendable: ColumnType<SyncRecordError[], string | undefined, never>;
  done: Generated<boolean>;
}

export interface RespondentTables {
  respondents: RespondentsTable;
  sync_jobs: SyncJobsTable;
  sync_job_batches: SyncJobBatchesTable;
}
