/** Tables of the analytics module (see the migration 2026-11-24T0600_analytics for the encoding of `cells`). */
import type { ColumnType } from 'kysely';
import type { Environment, Timestamp } from '../../db/schema.js';

export interface AnalyticsSettingsTable {
  organization_id: string;
  environment: Environment;
  anonymity_threshold: number;
  updated_at: Timestamp;
}

/** Written only by the triggers on `responses`; read only by aggregate queries. */
export interface AnalyticsResponsesTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  response_id: string;
  respondent_external_id: string | null;
  distribution_id: string | null;
  submitted_at: Timestamp;
  nums: ColumnType<(number | null)[], never, never>;
  cells: ColumnType<number[], never, never>;
}

export interface AnalyticsTables {
  analytics_settings: AnalyticsSettingsTable;
  analytics_responses: AnalyticsResponsesTable;
}
