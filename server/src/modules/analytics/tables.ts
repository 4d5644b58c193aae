/** Tables of the analytics module (see sql/10_analytics_encode.sql for the encoding of `cells`). */
import type { ColumnType } from 'kysely';
import type { Environment, Timestamp } from '../../db/columns.js';

export interface AnalyticsSettingsTable {
  organization_id: string;
  environment: Environment;
  anonymity_threshold: number;
  updated_at: Timestamp;
}

/**
 * Written by the triggers on `responses`, and by `forgetSubjects` when an erasure keeps responses without their
 * respondent; read only by aggregate queries.
 */
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
  /**
   * The subject: the respondent's fields when the response was stored (its distribution's snapshot, else the
   * record then), named as in `respondents`; `external_id` null when there was none. Never changed afterwards, but
   * for an erasure of the respondent's identity (`''`, see `forgetSubjects`).
   */
  external_id: ColumnType<string | null, never, never>;
  department: ColumnType<string | null, never, never>;
  location: ColumnType<string | null, never, never>;
  job_title: ColumnType<string | null, never, never>;
  manager_id: ColumnType<string | null, never, never>;
  employment_type: ColumnType<string | null, never, never>;
  /** The subject's managers upwards, as they were when the response was stored (migration 2026-11-28T0400). */
  manager_chain: ColumnType<string[] | null, never, never>;
}

/**
 * Exact per-segment counts (migration 2026-11-25T0300): per survey, respondent field, value and UTC day,
 * `counts[i]` responses more (or fewer) carry `codes[i]`. Field `#` (value null) holds the whole survey's daily
 * counts, field `*` the responses without a subject (2026-11-28T0100). Append-only deltas, kept by triggers.
 */
export interface AnalyticsSegmentCellsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  field: string;
  value: string | null;
  day: ColumnType<string, never, never>;
  codes: ColumnType<number[], never, never>;
  counts: ColumnType<number[], never, never>;
}

/** The audit of a survey's released results: its state, serialised by release-audit.ts (2026-11-29T0400). */
export interface AnalyticsReleaseAuditsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  state: string;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** The fingerprint of each group released for a survey, so that a repeated release needs no state. */
export interface AnalyticsReleasedSetsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  fingerprint: string;
  released_at: ColumnType<Date, Date | undefined, never>;
}

export interface AnalyticsTables {
  analytics_release_audits: AnalyticsReleaseAuditsTable;
  analytics_released_sets: AnalyticsReleasedSetsTable;
  analytics_segment_cells: AnalyticsSegmentCellsTable;
  analytics_settings: AnalyticsSettingsTable;
  analytics_responses: AnalyticsResponsesTable;
}
