/**
 * The database as Kysely sees it: one interface per table, columns in snake_case as in SQL. Feature modules
 * declare their own tables next to their repositories and are merged here.
 */
import type { SurveyTables } from '../modules/surveys/tables.js';
import type { RespondentTables } from '../modules/respondents/tables.js';
import type { EventTables } from '../modules/events/tables.js';
import type { WebhookTables } from '../modules/webhooks/tables.js';
import type { ExportTables } from '../modules/exports/tables.js';
import type { DistributionTables } from '../modules/distributions/tables.js';
import type { AnalyticsTables } from '../modules/analytics/tables.js';
import type { AiTables } from '../modules/ai/tables.js';
import type { ScimTables } from '../modules/scim/tables.js';
import type { PrivacyTables } from '../modules/privacy/tables.js';
import type { AuditTables } from '../modules/audit/tables.js';
import type { RetentionTables } from '../modules/retention/tables.js';

export type { CreatedAt, Environment, NullableTimestamp, Plan, Timestamp } from './columns.js';
import type { CreatedAt, Environment, NullableTimestamp, Plan } from './columns.js';

export interface OrganizationsTable {
  id: string;
  name: string;
  plan: Plan;
  /** Per-organization overrides of the plan's limits (benchmarks, negotiated contracts); null = the plan's. */
  rate_limit_per_minute: number | null;
  rate_limit_per_day: number | null;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  environment: Environment;
  name: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  key_hash: string;
  last4: string;
  scopes: string[];
  created_at: CreatedAt;
  last_used_at: NullableTimestamp;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface IdempotencyKeysTable {
  organization_id: string;
  environment: Environment;
  idempotency_key: string;
  request_hash: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_body: unknown;
  created_at: CreatedAt;
  /** The request that holds a running key, and until when (the idempotency lease). */
  lease_owner: string | null;
  lease_expires_at: Date | null;
}

export interface RateLimitsTable {
  key: string;
  points: number;
  expire: number | null;
}

export interface CoreTables {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  rate_limits: RateLimitsTable;
}

export interface Database
  extends
    CoreTables,
    SurveyTables,
    RespondentTables,
    EventTables,
    WebhookTables,
    ExportTables,
    DistributionTables,
    AnalyticsTables,
    AiTables,
    ScimTables,
    PrivacyTables,
    AuditTables,
    RetentionTables {}
