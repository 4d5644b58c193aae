/** The table of the AI module: one row per requested analysis; the finished result is one jsonb value. */
import type { ColumnType } from 'kysely';
import type { AiAnalysis } from '../../generated/openapi.js';
import type { CreatedAt, Environment, NullableTimestamp } from '../../db/columns.js';

export type { AiAnalysis };

export type AnalysisStatus = AiAnalysis['status'];
export type ProviderName = AiAnalysis['provider'];
export type AnalysisErrorCode = NonNullable<AiAnalysis['errorCode']>;

/** The fields an analysis fills when it completes. */
export type AnalysisResult = Pick<
  AiAnalysis,
  | 'commentCount'
  | 'language'
  | 'summary'
  | 'sentiment'
  | 'questions'
  | 'responseSentiments'
  | 'themes'
  | 'recommendations'
  | 'actions'
  | 'anonymity'
>;

export interface AnalysisRequest {
  questionIds?: string[];
  focus?: string;
}

type Json<T> = ColumnType<T, string, string>;

export interface AiAnalysesTable {
  organization_id: string;
  environment: Environment;
  id: string;
  survey_id: string;
  status: AnalysisStatus;
  provider: ProviderName;
  model: string | null;
  request: Json<AnalysisRequest>;
  response_count: ColumnType<number, number | undefined, number>;
  result: ColumnType<AnalysisResult | null, string | null | undefined, string | null>;
  error: string | null;
  error_code: AnalysisErrorCode | null;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
}

export interface AiTables {
  ai_analyses: AiAnalysesTable;
}
