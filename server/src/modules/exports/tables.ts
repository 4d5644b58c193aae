/** Tables of the exports module (see migrations/2026-11-24T0500_exports.ts and 2026-11-25T0400_export_formula_escaping.ts). */
import type { ColumnType, Generated } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { CreatedAt, Environment, NullableTimestamp } from '../../db/schema.js';

export type ExportFormat = components['schemas']['ExportFormat'];
export type ExportStatus = components['schemas']['Export']['status'];
export type ChoiceValues = 'ids' | 'labels';

export interface ExportsTable {
  organization_id: string;
  environment: Environment;
  id: string;
  survey_id: string;
  format: ExportFormat;
  status: ExportStatus;
  /** null: every question. */
  question_ids: string[] | null;
  choice_values: ChoiceValues;
  bom: Generated<boolean>;
  /** CSV only: prefix user-supplied text cells that a spreadsheet would evaluate with `'` (see formats.ts). */
  escape_formulas: Generated<boolean>;
  submitted_after: NullableTimestamp;
  submitted_before: NullableTimestamp;
  watermark: NullableTimestamp;
  total_rows: number | null;
  rows_written: Generated<number>;
  row_count: number | null;
  size: number | null;
  attempts: Generated<number>;
  /** The attempt whose chunks form the completed file. */
  file_attempt: number | null;
  error: string | null;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  expires_at: NullableTimestamp;
  file_deleted_at: NullableTimestamp;
}

export interface ExportChunksTable {
  organization_id: string;
  environment: Environment;
  export_id: string;
  attempt: number;
  seq: number;
  byte_offset: number;
  data: Buffer;
}

export interface ResponseDeletionsTable {
  organization_id: string;
  environment: Environment;
  survey_id: string;
  deleted_at: ColumnType<Date, Date | string, never>;
  response_id: string;
}

export interface ExportTables {
  exports: ExportsTable;
  export_chunks: ExportChunksTable;
  response_deletions: ResponseDeletionsTable;
}
