/** The webhook tables (see migrations/2026-11-24T0300_webhooks.ts). */
import type { ColumnType } from 'kysely';
import type { CreatedAt, Environment, NullableTimestamp, Timestamp } from '../../db/columns.js';
import type { EventType } from '../../generated/openapi.js';

export type DisabledReason = 'manual' | 'endpoint_gone' | 'failing';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhooksTable {
  organization_id: string;
  environment: Environment;
  id: string;
  url: string;
  /** Event types, or ['*']. */
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  disabled_at: NullableTimestamp;
  failing_since: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface WebhookSecretsTable {
  organization_id: string;
  environment: Environment;
  webhook_id: string;
  secret: string;
  created_at: CreatedAt;
  expires_at: NullableTimestamp;
}

export interface WebhookDeliveriesTable {
  organization_id: string;
  environment: Environment;
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  manual: ColumnType<boolean, boolean | undefined, boolean>;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  response_status: number | null;
  latency_ms: number | null;
  error: string | null;
  response_excerpt: string | null;
  created_at: CreatedAt;
  due_at: ColumnType<Date, Date | string | undefined, Date | string>;
  lease_until: NullableTimestamp;
  claim_token: string | null;
  delivered_at: NullableTimestamp;
  next_retry_at: NullableTimestamp;
}

export interface WebhookTables {
  webhooks: WebhooksTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
