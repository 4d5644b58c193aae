/** The audit module's table (see migrations/2026-11-29T0900_audit_log.ts). */
import type { ColumnType } from 'kysely';
import type { AuditAction, AuditEntry } from '../../generated/openapi.js';
import type { Environment } from '../../db/columns.js';

export type { AuditAction, AuditEntry };

export type AuditTargetType = AuditEntry['target']['type'];

export interface AuditLogTable {
  organization_id: string;
  environment: Environment;
  /** `aud_…`, sortable by creation time: the log's order. */
  id: string;
  occurred_at: ColumnType<Date, Date | undefined, never>;
  actor_type: 'key' | 'system';
  actor_key_id: string | null;
  actor_name: string | null;
  action: AuditAction;
  target_type: AuditTargetType;
  target_id: string | null;
  request_id: string | null;
  client_address: string | null;
}

export interface AuditTables {
  audit_log: AuditLogTable;
}
