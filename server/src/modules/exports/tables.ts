/**
 * Tables of the exports module (see migrations/2026-11-24T0500_exports.ts, 2026-11-25T0400_export_formula_escaping.ts,
 * 2026-11-25T0600_export_snapshots.ts and 2026-11-29T0800_privacy_requests.ts).
 */
import type { ColumnType, Generated } from 'kysely';
import type { Export, ExportFormat } from '../../generated/openapi.js';
import type { CreatedAt, Environment, NullableTimestamp } from '../../db/columns.js';

export type { ExportFormat };

export type ExportStatus = Export['status'];
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
  /** The language of labels and column names, as the survey spells it; null: ids and the default language. */
  language: ColumnType<string | null, string | null | undefined, never>;
  bom: Generated<boolean>;
  /** CSV only: prefix user-supplied text cells that a spreadsheet would evaluate with `'` (see formats.ts). */
  escape_formulas: Generated<boolean>;
  submitted_after: NullableTimestamp;
  submitted_before: NullableTimestamp;
  /** Set by the first attempt: the snapshot's time, or `submitted_before` when earlier (see `Export.watermark`). */
  watermark: NullableTimestamp;
  /**
   * `pg_current_snapshot()` of the statement that accepted the export (text form `xmin:xmax:xip,…`): the export
   * holds the responses whose inserting transaction it sees as committed. null: an export accepted before
   * snapshots, bounded by its `watermark` (time) instead.
   */
  snapshot: ColumnType<string | null, string | null | undefined, never>;
  /** When `snapshot` was taken (the database's clock, milliseconds). */
  snapshot_at: NullableTimestamp;
  /** An increment: the previous export's snapshot — what it saw is left out (with `previous_before`). */
  previous_snapshot: ColumnType<string | null, string | null | undefined, never>;
  /** An increment: the previous export's `submitted_before` (null: it had no upper bound). */
  previous_before: ColumnType<Date | null, Date | null | undefined, never>;
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
  /** When an erasure deleted the file because it held the erased person's responses (migration 2026-11-29T0800). */
  file_erased_at: ColumnType<Date | null, never, Date | null>;
  /** The erasure (`prv_…`) that deleted it. */
  file_erased_by: ColumnType<string | null, never, string | null>;
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
  /** The deleting transaction (`pg_current_xact_id()`, xid8, as text); null for deletions recorded before snapshots. */
  xact_id: ColumnType<string | null, never, never>;
  /** Whose response it was, until an erasure of them clears it (migration 2026-11-29T1200). */
  respondent_external_id: ColumnType<string | null, never, string | null>;
  submitted_at: ColumnType<Date | null, never, never>;
}

export interface ExportTables {
  exports: ExportsTable;
  export_chunks: ExportChunksTable;
  response_deletions: ResponseDeletionsTable;
}
