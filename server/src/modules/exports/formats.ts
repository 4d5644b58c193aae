/**
 * The four file formats. Each writer takes rows one page at a time and writes bytes into a Writable (the chunk
 * sink), awaiting its backpressure, so nothing accumulates in memory.
 *
 * - CSV: csv-stringify (RFC 4180 quoting, `\r\n`), one column per question in the survey's order. Every cell
 *   holding a line break, a quote or a separator is quoted; user-supplied text that a spreadsheet would evaluate
 *   as a formula is prefixed with `'` unless the export asked for raw cells (`escapeFormulas: false`).
 * - JSON: one array; NDJSON: one record per line. Records are the contract's `ExportRecord`.
 * - XLSX: exceljs's streaming WorkbookWriter: each row is committed (serialised and released) as it is added.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { components } from '../../generated/openapi.js';
import type { ChoiceValues, ExportFormat } from './tables.js';

type Question = components['schemas']['Question'];
type ExportRecord = components['schemas']['ExportRecord'];
type AnswerValue = components['schemas']['Answer']['value'];

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

/** Separator between a question's column name and the part of it a column holds (a matrix row, a ranked item). */
export const PART_SEPARATOR = ' · ';

type Cell = string | number | null;
/** One column of the tabular formats: its header, and its cell from a response's answers by question id. */
interface Column {
  header: string;
  cell(answers: ReadonlyMap<string, { value: AnswerValue; other?: string }>): Cell;
}

/** Maps answers to the exported questions, in survey order, with labels when asked. */
export class AnswerMapper {
  private readonly labels = new Map<string, Map<string, string>>();
  /** The tabular formats' answer columns: one per question, per matrix row and per ranked item, plus "Other". */
  readonly columns: readonly Column[];
  constructor(
    readonly questions: readonly Question[],
    private readonly choiceValues: ChoiceValues,
    /** How the tabular formats name a question's column: its id, or its text (an export with a `language`). */
    private readonly columnNames: 'ids' | 'texts' = 'ids',
  ) {
    for (const q of questions) {
      if (q.type === 'single_choice' || q.type === 'multiple_choice')
        this.labels.set(q.id, new Map(q.choices.map((c) => [c.id, c.label])));
      if (q.type === 'matrix' && q.columns) this.labels.set(q.id, new Map(q.columns.map((c) => [c.id, c.label])));
    }
    this.columns = questions.flatMap((q) => this.columnsOf(q));
  }

  private columnsOf(q: Question): Column[] {
    const part = (name: string) => `${this.columnName(q)}${PART_SEPARATOR}${name}`;
    switch (q.type) {
      case 'matrix':
        // N/A and an unanswered row are both an empty cell; the JSON formats tell them apart.
        return q.rows.map((row) => ({
          header: part(row.text),
          cell: (answers) => {
            const value = answers.get(q.id)?.value;
            const given = value && typeof value === 'object' && !Array.isArray(value) ? value[row.id] : undefined;
            return given === undefined || given === null
              ? null
              : typeof given === 'string'
                ? this.label(q.id, given)
                : given;
          },
        }));
      case 'ranking':
        return q.choices.map((choice) => ({
          header: part(choice.label),
          cell: (answers) => {
            const value = answers.get(q.id)?.value;
            const place = Array.isArray(value) ? value.indexOf(choice.id) : -1;
            return place < 0 ? null : place + 1;
          },
        }));
      default: {
        const whole: Column = {
          header: this.columnName(q),
          cell: (answers) => {
            const raw = answers.get(q.id)?.value;
            if (raw === undefined || raw === null) return null;
            const value = this.value(q.id, raw);
            if (Array.isArray(value))
              return value.map((v) => v.replaceAll(MULTI_SEPARATOR, `\\${MULTI_SEPARATOR}`)).join(MULTI_SEPARATOR);
            return typeof value === 'object' ? JSON.stringify(value) : value;
          },
        };
        if (!('allowOther' in q) || q.allowOther !== true) return [whole];
        return [whole, { header: part('Other'), cell: (answers) => answers.get(q.id)?.other ?? null }];
      }
    }
  }

  private label(questionId: string, choiceId: string): string {
    if (this.choiceValues === 'ids') return choiceId;
    // A choice removed from a draft survey after it was answered keeps its id.
    return this.labels.get(questionId)?.get(choiceId) ?? choiceId;
  }

  /** The name of a question's column in the CSV and XLSX header. */
  columnName(question: Question): string {
    return this.columnNames === 'texts' ? question.text : question.id;
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

  /** The answer cells of the tabular formats, one per column; null when unanswered or N/A. */
  cells(row: SourceRow): Cell[] {
    const byQuestion = new Map(row.answers.map((a) => [a.questionId, a]));
    return this.columns.map((column) => column.cell(byQuestion));
  }
}

const fixedColumns = ['responseId', 'submittedAt', 'respondentExternalId'];

const csvOptions = {
  record_delimiter: 'windows' as const,
  // With a record delimiter set, csv-stringify quotes only cells holding that delimiter (`\r\n`): a bare `\n` or
  // `\r` would stay unquoted and end the row for every reader that takes any line ending as one, as spreadsheets
  // do. So a cell holding either is quoted; and one holding `;` or a tab too, the separators spreadsheets use in
  // many locales or offer on import, so that no reader splits a cell mid-text and starts a new cell there (whose
  // text escapeFormula never saw). Cells holding `,` or `"` are quoted by csv-stringify itself.
  quoted_match: /[\r\n;\t]/,
};

function csvWriter(sink: Writable, mapper: AnswerMapper, { bom, escapeFormulas }: WriterOptions): FileWriter {
  // Only text that users supply is escaped: the survey's question ids (chosen by its author), respondent ids,
  // choice ids and labels, text answers. Response ids and timestamps are the service's own; NPS and rating
  // answers are numbers the service writes as numbers (never negative) and stay numbers.
  const text = escapeFormulas ? escapeFormula : (value: string) => value;
  const cell = (value: string | number | null) => (typeof value === 'string' ? text(value) : (value ?? ''));
  let started = false;
  const header = async () => {
    if (started) return;
    started = true;
    await write(
      sink,
      (bom ? '\ufeff' : '') + stringify([[...fixedColumns, ...mapper.columns.map((c) => text(c.header))]], csvOptions),
    );
  };
  return {
    async writeRows(rows) {
      await header();
      if (rows.length === 0) return;
      const records = rows.map((row) => [
        row.id,
        row.submittedAt,
        cell(row.respondentExternalId),
        ...mapper.cells(row).map(cell),
      ]);
      await write(sink, stringify(records, csvOptions));
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
async function xlsxWriter(sink: Writable, mapper: AnswerMapper): Promise<FileWriter> {
  // Loaded on first use: exceljs and its zip libraries cost about half a second to import, which every process
  // (each API and worker start, each test file) would otherwise pay for a format most exports do not use.
  const { default: ExcelJS } = await import('exceljs');
  // No shared strings (that table would grow with the file); styles only for the date format.
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: false, useStyles: true });
  const sheet = workbook.addWorksheet('Responses');
  sheet.columns = [
    { header: 'responseId', key: 'responseId', width: 32 },
    { header: 'submittedAt', key: 'submittedAt', width: 22, style: { numFmt: 'yyyy-mm-dd hh:mm:ss.000' } },
    { header: 'respondentExternalId', key: 'respondentExternalId', width: 20 },
    ...mapper.columns.map((c, i) => ({ header: c.header, key: `answer${i}`, width: 14 })),
  ];
  return {
    async writeRows(rows) {
      for (const row of rows) {
        sheet.addRow([row.id, new Date(row.submittedAt), row.respondentExternalId, ...mapper.cells(row)]).commit();
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
      return xlsxWriter(sink, mapper);
  }
}
