/**
 * Tables of the surveys module. Questions, settings and answers are jsonb: they are read and written whole,
 * never queried by field, and their shape is the contract's (validated on the way in).
 */
import type { ColumnType } from 'kysely';
import type {
  Answer,
  Question,
  SurveySettings,
  SurveyStatus,
  SurveyTranslationInput,
} from '../../generated/openapi.js';
import type { CreatedAt, Environment, NullableTimestamp, Timestamp } from '../../db/columns.js';

export type { SurveyStatus, SurveyTranslationInput };

/** jsonb arrays must be sent as JSON text (node-postgres would send a JS array as a PostgreSQL array). */
type Json<T> = ColumnType<T, string, string>;

export interface SurveysTable {
  id: string;
  organization_id: string;
  environment: Environment;
  title: string;
  description: string | null;
  status: SurveyStatus;
  questions: Json<Question[]>;
  settings: Json<SurveySettings>;
  /**
   * Responses folded so far; the count is this plus the survey's rows in `survey_response_counts` (read it
   * through the repository's `surveyColumns`, never alone).
   */
  response_count: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Last (re)launch. */
  launched_at: NullableTimestamp;
  paused_at: NullableTimestamp;
  closed_at: NullableTimestamp;
  /** First launch: the API's `launchedAt`, and the moment settings froze and questions could only grow. */
  first_launched_at: NullableTimestamp;
  /** The current version (`survey_versions`): 1 from the first launch, one more per change after it; null before. */
  version: ColumnType<number | null, number | null | undefined, number | null>;
  /** BCP 47 tags, the first being the language of the survey's own strings (`survey_translations` has the others). */
  languages: ColumnType<string[], string[] | undefined, string[]>;
}

/** Each version of a launched survey, whole: what its responses of that version answered. */
export interface SurveyVersionsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  version: number;
  title: string;
  description: string | null;
  questions: Json<Question[]>;
  created_at: CreatedAt;
}

export interface ResponsesTable {
  id: string;
  survey_id: string;
  organization_id: string;
  environment: Environment;
  respondent_external_id: string | null;
  /** Set (to the respondent id) only when the survey allows one response each; unique per survey. */
  dedupe_key: string | null;
  answers: Json<Answer[]>;
  submitted_at: Timestamp;
  /** The distribution whose answer page received the response (distributions module); null through the API. */
  distribution_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The survey's version it answered; null for responses stored before versions existed (version 1). */
  survey_version: ColumnType<number | null, number | null | undefined, number | null>;
  /** The language it was answered in; null when not known (an API submission that did not say). */
  language: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A survey's strings in one of its other languages: the body of `upsertSurveyTranslation`, as sent. */
export interface SurveyTranslationsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  language: string;
  content: Json<SurveyTranslationInput>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Append-only deltas of a survey's response count (+1 per response stored, −1 per deletion); see migration
 * 2026-11-25T0200. */
export interface SurveyResponseCountsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  n: number;
}

export interface SurveyTables {
  surveys: SurveysTable;
  survey_versions: SurveyVersionsTable;
  responses: ResponsesTable;
  survey_response_counts: SurveyResponseCountsTable;
  survey_translations: SurveyTranslationsTable;
}
