/** Tables of the distributions module (see migrations/2026-11-24T0400_distributions.ts). */
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment, NullableTimestamp, Timestamp } from '../../db/columns.js';
import type { EmploymentType } from '../../generated/openapi.js';

export type DistributionStatus = 'scheduled' | 'sending' | 'sent' | 'held' | 'cancelled' | 'failed';
export type DistributionMethod = 'email' | 'link' | 'embed' | 'kiosk';
export type RecipientStatus = 'pending' | 'sent' | 'failed' | 'bounced' | 'unsubscribed' | 'no_email' | 'responded';
export type ReminderStatus = 'none' | 'scheduled' | 'sending' | 'sent' | 'cancelled';

/** jsonb is written as JSON text (node-postgres would send a JS array as a PostgreSQL array). */
type Json<T> = ColumnType<T, string, string>;

export interface DistributionsTable {
  organization_id: string;
  environment: Environment;
  id: string;
  survey_id: string;
  status: DistributionStatus;
  method: DistributionMethod;
  targeting: Json<unknown>;
  schedule: Timestamp;
  reminder_enabled: boolean;
  reminder_after_days: number;
  subject: string | null;
  message: string | null;
  link_expires_in_days: number;
  expires_at: NullableTimestamp;
  matched_count: number | null;
  sent_count: Generated<number>;
  failed_count: Generated<number>;
  unsubscribed_count: Generated<number>;
  /** Recipients of an e-mail distribution skipped for having no address (status `no_email`). */
  no_email_count: Generated<number>;
  embed_token_hash: Buffer | null;
  /** Origins allowed to frame the answer pages (`embedOrigins`); empty: none. */
  embed_origins: Generated<string[]>;
  /** The first group of every access code of a kiosk distribution (access-codes.ts); null for other methods. */
  kiosk_prefix: ColumnType<string | null, string | null | undefined, string | null>;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  reminder_status: Generated<ReminderStatus>;
  reminder_sent_at: NullableTimestamp;
  failure_reason: string | null;
  attempts: Generated<number>;
  created_at: CreatedAt;
}

/**
 * One recipient: the respondent as the audience was frozen at the send (columns named as in `respondents`, so the
 * targeting compiler runs over it unchanged) and the delivery state.
 */
export interface DistributionRecipientsTable {
  organization_id: string;
  environment: Environment;
  distribution_id: string;
  survey_id: string;
  external_id: string;
  /** Null for a person without an e-mail address (status `no_email` in an e-mail distribution). */
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
  attributes: Json<Record<string, unknown>>;
  /** The respondent's preferred language when the audience was taken: their e-mails and answer page use it. */
  language: ColumnType<string | null, string | null | undefined, string | null>;
  token_hash: Buffer;
  /** Keyed hash of the kiosk access code (access-codes.ts); null for other methods. */
  access_code_hash: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  /** Which derivation of the code: 0 unless it collided with another recipient's (access-codes.ts). */
  access_code_round: Generated<number>;
  status: RecipientStatus;
  sent_at: NullableTimestamp;
  responded_at: NullableTimestamp;
  response_id: string | null;
  reminder_sent_at: NullableTimestamp;
  error: string | null;
  attempts: Generated<number>;
}

export interface UnsubscribesTable {
  organization_id: string;
  environment: Environment;
  email_lower: string;
  distribution_id: string | null;
  created_at: CreatedAt;
}

/** Kiosk code prefix → its tenant and distribution: read by `/k` before the tenant is known. */
export interface KioskPrefixesTable {
  prefix: string;
  organization_id: string;
  environment: Environment;
  distribution_id: string;
  created_at: CreatedAt;
}

export interface LinkSecretsTable {
  id: number;
  secret: Buffer;
  created_at: CreatedAt;
}

export interface DistributionTables {
  distributions: DistributionsTable;
  distribution_recipients: DistributionRecipientsTable;
  unsubscribes: UnsubscribesTable;
  link_secrets: LinkSecretsTable;
  kiosk_prefixes: KioskPrefixesTable;
}
