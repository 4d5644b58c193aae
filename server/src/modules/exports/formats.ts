/**
 * The four file formats. Each writer takes rows one page at a time and writes bytes into a Writable (the chunk
 * sink), awaiting its backpressure, so nothing accumulates in memory.
 *
 * - CSV: csv-stringify (RFC 4180 quoting, `\r\n`), the columns of `tableColumns` (shared with XLSX). Every cell
 *   holding a line break, a quote or a separator is quoted; user-supplied text that a spreadsheet would evaluate
 *   as a formula is prefixed with `'` unless the export asked for raw cells (`escapeFormulas: false`).
 * - JSON: one array; NDJSON: one record per line. Records are the contract's `ExportRecord`.
 * - XLSX: exceljs's streaming WorkbookWriter: each row is committed (serialised and released) as it is added.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Answer, ExportRecord, Question } from '../../generated/openapi.js';
import { wordsFor } from '../distributions/index.js';
import type { ChoiceValues, ExportFormat } from './tables.js';

type AnswerValue = Answer['value'];

export interface SourceRow {
  id: string;
  surveyId: string;
  respondentExternalId: string | null;
  distributionId: string | null;
  surveyVersion: number;
  /** The language it was answered in; null when not known. */
  language?: string | null;
  answers: { questionId: string; value: AnswerValue; other?: string }[];
  /** ISO 8601 UTC, as the API shows it. */
  submittedAt: string;
}

export interface FileWriter {
  writeRows(rows: readonly SourceRow[]): Promise<void>;
  /** Writes the file's end and waits until every byte reached the sink. */
  finish(): Promise<void>;
}

export const mediaTypes: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Separator of multiple-choice answers in one CSV or XLSX cell. */
export const MULTI_SEPARATOR = ';';

export interface WriterOptions {
  /** CSV only: start the file with a UTF-8 byte order mark. */
  bom: boolean;
  /** CSV only: prefix user-supplied text cells that a spreadsheet would evaluate with `'` (see escapeFormula). */
  escapeFormulas: boolean;
  /** Whether the survey shows who answered (identified): CSV and XLSX have no identity column otherwise. */
  identity: boolean;
}

/**
 * Text that spreadsheet programs (Excel, LibreOffice, Google Sheets, Numbers) evaluate as a formula when they open
 * a CSV file: a first character `=`, `+`, `-`, `@`, tab or carriage return (OWASP's list), or the full-width form
 * of one of the first four, which some programs normalise to it. Apostrophes in front count as well (see below).
 */
const FORMULA_START = /^'*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * The CSV cell of a user-supplied text: with a leading `'` when a spreadsheet would otherwise evaluate it (the
 * apostrophe is how spreadsheets mark a cell as text). A text that already starts with apostrophes before such a
 * character gets one more, so that the rule can be undone exactly: removing one `'` from each cell that starts
 * with one or more `'` followed by one of those characters gives back the original text.
 */
export function escapeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

async function write(sink: Writable, data: string | Buffer): Promise<void> {
  if (!sink.write(data)) await once(sink, 'drain');
}

async function end(sink: Writable): Promise<void> {
  sink.end();
  await finished(sink);
}

/** Separator between a question's text and the part of it a column holds, in headers named by labels. */
export const PART_SEPARATOR = ' · ';

type Cell = string | number | null;
type AnswersById = ReadonlyMap<string, { value: AnswerValue; other?: string }>;
/** One column of the tabular formats (CSV and XLSX): its header, and its cell of a response. */
export interface TableColumn {
  header: string;
  /** An ISO 8601 timestamp: XLSX writes a date cell. */
  timestamp?: true;
  /** XLSX column width, in characters. */
  width: number;
  cell(row: SourceRow, answers: AnswersById): Cell;
}

/** Maps answers to the exported questions, in survey order, with labels when asked. */
export class AnswerMapper {
  private readonly labels = new Map<string, Map<string, string>>();
  /** The tabular formats' answer columns: one per question, per matrix row and per ranked item, plus "Other". */
  readonly columns: readonly TableColumn[];
  constructor(
    readonly questions: readonly Question[],
    private readonly choiceValues: ChoiceValues,
    /**
     * The export's language: the tabular formats name answer columns by ids without one (stable when a launched
     * survey is reworded), by its texts and labels with one (`questions` are then in that language).
     */
    private readonly language: string | null = null,
  ) {
    for (const q of questions) {
      if (q.type === 'single_choice' || q.type === 'multiple_choice')
        this.labels.set(q.id, new Map(q.choices.map((c) => [c.id, c.label])));
      if (q.type === 'matrix' && q.columns) this.labels.set(q.id, new Map(q.columns.map((c) => [c.id, c.label])));
    }
    this.columns = questions.flatMap((q) => this.columnsOf(q));
  }

  /** A question's columns; the layout table of the contract (`ExportFormat`) says the same. */
  private columnsOf(q: Question): TableColumn[] {
    const column = (id: string, label: string, cell: (answers: AnswersById) => Cell): TableColumn => ({
      header: this.language === null ? `${q.id}.${id}` : `${q.text}${PART_SEPARATOR}${label}`,
      width: 14,
      cell: (_row, answers) => cell(answers),
    });
    switch (q.type) {
      case 'matrix':
        // N/A and an unanswered row are both an empty cell; the JSON formats tell them apart.
        return q.rows.map((row) =>
          column(row.id, row.text, (answers) => {
            const value = answers.get(q.id)?.value;
            const given = value && typeof value === 'object' && !Array.isArray(value) ? value[row.id] : undefined;
            return given === undefined || given === null
              ? null
              : typeof given === 'string'
                ? this.label(q.id, given)
                : given;
          }),
        );
      case 'ranking':
        return q.choices.map((choice) =>
          column(choice.id, choice.label, (answers) => {
            const value = answers.get(q.id)?.value;
            const place = Array.isArray(value) ? value.indexOf(choice.id) : -1;
            return place < 0 ? null : place + 1;
          }),
        );
      default: {
        const whole: TableColumn = {
          header: this.language === null ? q.id : q.text,
          width: 14,
          cell: (_row, answers) => {
            const raw = answers.get(q.id)?.value;
            if (raw === undefined || raw === null) return null;
            const value = this.value(q.id, raw);
            if (Array.isArray(value))
              return value.map((v) => v.replaceAll(MULTI_SEPARATOR, `\\${MULTI_SEPARATOR}`)).join(MULTI_SEPARATOR);
            return typeof value === 'object' ? JSON.stringify(value) : value;
          },
        };
        if (!('allowOther' in q) || q.allowOther !== true) return [whole];
        // "Other" in the answer page's word for it in the export's language.
        const other = column(
          'other',
          wordsFor(this.language).text('other'),
          (answers) => answers.get(q.id)?.other ?? null,
        );
        return [whole, other];
      }
    }
  }

  private label(questionId: string, choiceId: string): string {
    if (this.choiceValues === 'ids') return choiceId;
    // A choice removed from a draft survey after it was answered keeps its id.
    return this.labels.get(questionId)?.get(choiceId) ?? choiceId;
  }

  value(questionId: string, value: AnswerValue): AnswerValue {
    if (!this.labels.has(questionId) || value === null) return value;
    if (Array.isArray(value)) return value.map((v) => this.label(questionId, v));
    if (typeof value === 'object')
      return Object.fromEntries(
        Object.entries(value).map(([row, cell]) => [
          row,
          typeof cell === 'string' ? this.label(questionId, cell) : cell,
        ]),
      );
    return typeof value === 'string' ? this.label(questionId, value) : value;
  }

  /** The record of the JSON formats: only exported questions, in survey order. */
  record(row: SourceRow): ExportRecord {
    const byQuestion = new Map(row.answers.map((a) => [a.questionId, a]));
    const answers: ExportRecord['answers'] = [];
    for (const q of this.questions) {
      const answer = byQuestion.get(q.id);
      if (answer === undefined) continue;
      answers.push({
        questionId: q.id,
        value: this.value(q.id, answer.value),
        ...(answer.other !== undefined ? { other: answer.other } : {}),
        ...(answer.value === null ? { notApplicable: true as const } : {}),
      });
    }
    return {
      id: row.id,
      surveyId: row.surveyId,
      respondentExternalId: row.respondentExternalId,
      distributionId: row.distributionId,
      answers,
      submittedAt: row.submittedAt,
      surveyVersion: row.surveyVersion,
      language: row.language ?? null,
    };
  }
}

/**
 * The columns that say who answered. Kept apart so that a survey which must not show who answered can leave them
 * out of both tabular formats in one place.
 */
/** Who answered: only for a survey that shows it (a confidential or anonymous survey's files have no such column). */
function identityColumns(identity: boolean): TableColumn[] {
  return identity ? [{ header: 'respondentExternalId', width: 20, cell: (row) => row.respondentExternalId }] : [];
}

/**
 * The layout of CSV and XLSX files, one function for both: the response's own columns, who answered, where and
 * in which language (as `ExportRecord` says), then the answer columns in the survey's question order.
 */
export function tableColumns(mapper: AnswerMapper, identity: boolean): TableColumn[] {
  return [
    { header: 'responseId', width: 32, cell: (row) => row.id },
    { header: 'submittedAt', width: 22, timestamp: true, cell: (row) => row.submittedAt },
    ...identityColumns(identity),
    { header: 'distributionId', width: 32, cell: (row) => row.distributionId },
    { header: 'language', width: 10, cell: (row) => row.language ?? null },
    ...mapper.columns,
  ];
}

/** A response's cells, one per column of `tableColumns`; null when unanswered, N/A or not known. */
function cellsOf(columns: readonly TableColumn[], row: SourceRow): Cell[] {
  const answers = new Map(row.answers.map((a) => [a.questionId, a]));
  return columns.map((column) => column.cell(row, answers));
}

const csvOptions = {
  record_delimiter: 'windows' as const,
  // With a record delimiter set, csv-stringify quotes only cells holding that delimiter (`\r\n`): a bare `\n` or
  // `\r` would stay unquoted and end the row for every reader that takes any line ending as one, as spreadsheets
  // do. So a cell holding either is quoted; and one holding `;` or a tab too, the separators spreadsheets use in
  // many locales or offer on import, so that no reader splits a cell mid-text and starts a new cell there (whose
  // text escapeFormula never saw). Cells holding `,` or `"` are quoted by csv-stringify itself.
  quoted_match: /[\r\n;\t]/,
};

function csvWriter(sink: Writable, mapper: AnswerMapper, { bom, escapeFormulas, identity }: WriterOptions): FileWriter {
  // Text cells and headers are escaped: user-supplied text (question ids and texts, respondent ids, choice ids and
  // labels, text answers) may start like a formula; the service's own ids, timestamps and language tags never do,
  // so escaping leaves them as they are. Numbers (NPS, ratings, grid scales, places, number answers) stay numbers.
  const text = escapeFormulas ? escapeFormula : (value: string) => value;
  const cell = (value: Cell) => (typeof value === 'string' ? text(value) : (value ?? ''));
  const columns = tableColumns(mapper, identity);
  let started = false;
  const header = async () => {
    if (started) return;
    started = true;
    await write(sink, (bom ? '\ufeff' : '') + stringify([columns.map((c) => text(c.header))], csvOptions));
  };
  return {
    async writeRows(rows) {
      await header();
      if (rows.length === 0) return;
      await write(
        sink,
        stringify(
          rows.map((row) => cellsOf(columns, row).map(cell)),
          csvOptions,
        ),
      );
    },
    async finish() {
      await header();
      await end(sink);
    },
  };
}

function jsonWriter(sink: Writable, mapper: AnswerMapper): FileWriter {
  let count = 0;
  return {
    async writeRows(rows) {
      if (rows.length === 0) return;
      let text = '';
      for (const row of rows) text += (count++ === 0 ? '[\n' : ',\n') + JSON.stringify(mapper.record(row));
      await write(sink, text);
    },
    async finish() {
      await write(sink, count === 0 ? '[]\n' : '\n]\n');
      await end(sink);
    },
  };
}

function ndjsonWriter(sink: Writable, mapper: AnswerMapper): FileWriter {
  return {
    async writeRows(rows) {
      if (rows.length === 0) return;
      let text = '';
      for (const row of rows) text += JSON.stringify(mapper.record(row)) + '\n';
      await write(sink, text);
    },
    async finish() {
      await end(sink);
    },
  };
}

/**
 * Strings are written as text cells (exceljs writes a formula only when given `{ formula }`), so a hostile answer
 * starting with `=` is shown, never evaluated, and needs no escaping here.
 */
async function xlsxWriter(sink: Writable, mapper: AnswerMapper, identity: boolean): Promise<FileWriter> {
  // Loaded on first use: exceljs and its zip libraries cost about half a second to import, which every process
  // (each API and worker start, each test file) would otherwise pay for a format most exports do not use.
  const { default: ExcelJS } = await import('exceljs');
  // No shared strings (that table would grow with the file); styles only for the date format.
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: false, useStyles: true });
  const sheet = workbook.addWorksheet('Responses');
  const columns = tableColumns(mapper, identity);
  sheet.columns = columns.map((c, i) => ({
    header: c.header,
    key: `c${i}`,
    width: c.width,
    ...(c.timestamp ? { style: { numFmt: 'yyyy-mm-dd hh:mm:ss.000' } } : {}),
  }));
  const timestamps = columns.flatMap((c, i) => (c.timestamp ? [i] : []));
  return {
    async writeRows(rows) {
      for (const row of rows) {
        const cells: Array<Cell | Date> = cellsOf(columns, row);
        for (const i of timestamps) if (typeof cells[i] === 'string') cells[i] = new Date(cells[i]);
        sheet.addRow(cells).commit();
      }
      // exceljs writes each committed row into the zip entry's input (a readable-stream PassThrough) without
      // waiting: its StreamBuf ignores backpressure, so rows would pile up in memory whenever deflating is slower
      // than producing them (measured: +30 MB per 150,000 rows). Wait, once per page, for that input to drain
      // (with a one-second fallback, in case a future exceljs consumes it differently).
      const entryInput = (
        sheet as unknown as { stream?: { pipes?: Array<Writable & { _writableState?: { needDrain?: boolean } }> } }
      ).stream?.pipes?.[0];
      if (entryInput?._writableState?.needDrain)
        await Promise.race([once(entryInput, 'drain'), new Promise((resolve) => setTimeout(resolve, 1000))]);
      if (sink.writableNeedDrain) await once(sink, 'drain');
    },
    async finish() {
      sheet.commit();
      await workbook.commit();
      await finished(sink);
    },
  };
}

export async function createWriter(
  format: ExportFormat,
  sink: Writable,
  mapper: AnswerMapper,
  options: WriterOptions,
): Promise<FileWriter> {
  switch (format) {
    case 'csv':
      return csvWriter(sink, mapper, options);
    case 'json':
      return jsonWriter(sink, mapper);
    case 'ndjson':
      return ndjsonWriter(sink, mapper);
    case 'xlsx':
      return xlsxWriter(sink, mapper, options.identity);
  }
}
