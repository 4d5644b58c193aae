/** Tables of the retention module (see migrations/2026-11-29T1000_retention.ts). */
import type { ColumnType, Generated } from 'kysely';
import type {
  LegalHold,
  RetentionCounts,
  RetentionRule,
  RetentionRun,
  RetentionSettings,
  RetentionSettingsUpdate,
  RetentionSurveyException as SurveyException,
} from '../../generated/openapi.js';
import type { Environment } from '../../db/columns.js';

export type {
  LegalHold,
  RetentionCounts,
  RetentionRule,
  RetentionRun,
  RetentionSettings,
  RetentionSettingsUpdate,
  SurveyException,
};

/** jsonb is written as JSON text (node-postgres would send a JS array as a PostgreSQL array). */
type Json<T> = ColumnType<T, string, string>;

export interface RetentionSettingsTable {
  organization_id: string;
  environment: Environment;
  responses: Json<RetentionRule | null>;
  export_files_days: number;
  events_days: number;
  webhook_deliveries_days: number;
  survey_exceptions: Json<SurveyException[]>;
  /** Each with its `placedAt`, kept while later policies repeat the hold. */
  legal_holds: Json<Required<LegalHold>[]>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface RetentionRunsTable {
  organization_id: string;
  environment: Environment;
  /** `ret_…`. */
  id: string;
  /** The UTC day the run is for: at most one a day per environment. */
  day: ColumnType<string, string, never>;
  status: RetentionRun['status'];
  attempts: Generated<number>;
  started_at: ColumnType<Date, Date | undefined, never>;
  completed_at: ColumnType<Date | null, never, Date | string | null>;
  /** What the run's committed batches removed so far (all of it once completed). */
  removed: Json<RetentionCounts>;
}

export interface RetentionTables {
  retention_settings: RetentionSettingsTable;
  retention_runs: RetentionRunsTable;
}
