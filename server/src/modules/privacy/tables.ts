/** Tables of the privacy module (see migrations/2026-11-29T0800_privacy_requests.ts). */
import type { ColumnType, Generated } from 'kysely';
import type {
  PrivacyRequest,
  PrivacyRequestInventory as Inventory,
  PrivacyRequestSubjectFingerprint,
  PrivacyRequestWebhookRecipient as WebhookRecipient,
} from '../../generated/openapi.js';
import type { CreatedAt, Environment, NullableTimestamp } from '../../db/columns.js';

export type { Inventory, WebhookRecipient };

export type PrivacyRequestType = PrivacyRequest['type'];
export type PrivacyRequestStatus = PrivacyRequest['status'];
export type ErasureScope = NonNullable<PrivacyRequest['scope']>;
export type SubjectKind = PrivacyRequestSubjectFingerprint['kind'];

/** jsonb is written as JSON text (node-postgres would send a JS array as a PostgreSQL array). */
type Json<T> = ColumnType<T, string | undefined, string>;

export interface PrivacyRequestsTable {
  organization_id: string;
  environment: Environment;
  id: string;
  type: PrivacyRequestType;
  /** An erasure's scope; null for access (a check holds the two together). */
  scope: ErasureScope | null;
  dry_run: Generated<boolean>;
  status: PrivacyRequestStatus;
  subject_kind: SubjectKind;
  /**
   * The identifier (an externalId, or an e-mail address as sent) while the request is pending or processing; null
   * once it has finished (a check refuses anything else), so a finished request holds no personal data.
   */
  subject_value: string | null;
  /** Random, per request: the fingerprint of one request says nothing about another's. */
  subject_salt: Buffer;
  /** `sha256:` + hex SHA-256 of salt and identifier (subject.ts). */
  subject_hash: string;
  inventory: ColumnType<Inventory | null, string | null | undefined, string | null>;
  webhook_recipients: Json<WebhookRecipient[]>;
  error: string | null;
  attempts: Generated<number>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  file_size: ColumnType<number | null, number | null | undefined, number | null>;
  file_expires_at: NullableTimestamp;
  file_deleted_at: NullableTimestamp;
  /** When an erasure of the same person deleted this access request's file, and which (`prv_…`). */
  file_erased_at: NullableTimestamp;
  file_erased_by: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An access request's file: one JSON document. */
export interface PrivacyRequestFilesTable {
  organization_id: string;
  environment: Environment;
  request_id: string;
  data: Buffer;
}

export interface PrivacyTables {
  privacy_requests: PrivacyRequestsTable;
  privacy_request_files: PrivacyRequestFilesTable;
}
