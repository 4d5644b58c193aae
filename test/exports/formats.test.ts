/**
 * Every format, parsed back with a real parser and compared with the stored answers: CSV (RFC 4180 parser),
 * JSON, NDJSON and XLSX (exceljs's reader, typed cells). Free text with commas, quotes, new lines and
 * non-Latin scripts; choice labels; a subset of questions; the BOM; an empty survey; request validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { activeSurvey, exportToBuffer, parseCsv, readXlsx, storedResponses, submit, tenant } from './fixtures.js';

let t: TestService;
let live: Awaited<ReturnType<typeof tenant>>['live'];
let surveyId: string;
let stored: Awaited<ReturnType<typeof storedResponses>>;

beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenant(t));
  surveyId = (await activeSurvey(live)).id;
  await submit(live, surveyId, 24);
  stored = await storedResponses(live, surveyId);
});
afterAll(async () => {
  await t?.close();
});

/** The columns before the answers in CSV and XLSX. */
const FIXED = ['responseId', 'submittedAt', 'respondentExternalId', 'distributionId', 'language'];

const labels: Record<string, Record<string, string>> = {
  q_3: { c_1: 'Office; HQ', c_2: 'Home', c_3: 'Café "Zürich"' },
  q_4: { c_1: 'Learning', c_2: 'Flex, remote', c_3: 'Health' },
};

/** What a cell must hold for an answer (ids, or labels with `;` escaped); `csv`: as the default CSV writes it. */
function cell(questionId: string, value: unknown, withLabels: boolean, csv = false): string {
  if (value === undefined) return '';
  const map = (v: string) => (withLabels && labels[questionId] ? labels[questionId]![v]! : v);
  // Text a spreadsheet would evaluate as a formula gets a leading `'` in CSV (test/exports/csv-safety.test.ts).
  const text = (s: string) => (csv && /^'*[=+\-@\t\r]/.test(s) ? `'${s}` : s);
  // Only inside a multiple-choice cell is `;` a separator, so only there is it escaped.
  if (Array.isArray(value)) return text(value.map((v) => map(v).replaceAll(';', '\\;')).join(';'));
  if (typeof value === 'string') return text(map(value));
  return String(value);
}

describe('CSV', () => {
  it('has one row per response, oldest first, one column per question, and round-trips every answer', async () => {
    const { export: done, bytes } = await exportToBuffer(live, surveyId, { format: 'csv' });
    expect(done).toMatchObject({ status: 'completed', progress: 100, rowCount: 24, size: bytes.length, format: 'csv' });
    expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
    const text = bytes.toString('utf8');
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = await parseCsv(text);
    expect(rows[0]).toEqual([...FIXED, 'q_1', 'q_2', 'q_3', 'q_4', 'q_5']);
    expect(rows.slice(1)).toEqual(
      stored.map((r) => {
        const byQ = new Map(r.answers.map((a) => [a.questionId, a.value]));
        return [
          r.id,
          r.submittedAt,
          r.respondentExternalId ?? '',
          r.distributionId ?? '',
          r.language ?? '',
          ...['q_1', 'q_2', 'q_3', 'q_4', 'q_5'].map((q) => cell(q, byQ.get(q), false, true)),
        ];
      }),
    );
    // The tricky texts survived: new lines inside a quoted cell, quotes doubled, Unicode intact, a formula escaped.
    expect(rows.map((r) => r[9])).toContain('line one\nline two\r\nline three');
    expect(rows.map((r) => r[9])).toContain("'=SUM(A1:A2) ;semi;colons;");
    expect(rows.map((r) => r[9])).toContain('Ünïcödé — 日本語 — עברית — 🎉👍🏽');
    expect(text).toContain('"comma, and ""quotes"" inside"');
  });

  it('writes labels, a subset of questions in survey order, and a BOM when asked', async () => {
    const { bytes } = await exportToBuffer(live, surveyId, {
      format: 'csv',
      choiceValues: 'labels',
      questionIds: ['q_4', 'q_3'],
      bom: true,
    });
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = await parseCsv(bytes.subarray(3).toString('utf8'));
    expect(rows[0]).toEqual([...FIXED, 'q_3', 'q_4']);
    expect(rows.slice(1)).toEqual(
      stored.map((r) => {
        const byQ = new Map(r.answers.map((a) => [a.questionId, a.value]));
        return [
          r.id,
          r.submittedAt,
          r.respondentExternalId ?? '',
          r.distributionId ?? '',
          r.language ?? '',
          cell('q_3', byQ.get('q_3'), true, true),
          cell('q_4', byQ.get('q_4'), true, true),
        ];
      }),
    );
    expect(rows.map((r) => r[5])).toContain('Office; HQ');
    expect(rows.map((r) => r[6])).toContain('Learning;Flex, remote');
  });
});

describe('JSON and NDJSON', () => {
  it('JSON is one array of the stored responses', async () => {
    const { export: done, bytes } = await exportToBuffer(live, surveyId, { format: 'json' });
    expect(done.rowCount).toBe(24);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(stored);
  });

  it('NDJSON has one response a line; labels replace ids; questionIds filter the answers', async () => {
    const { bytes } = await exportToBuffer(live, surveyId, {
      format: 'ndjson',
      choiceValues: 'labels',
      questionIds: ['q_3', 'q_4', 'q_5'],
    });
    const lines = bytes.toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(
      stored.map((r) => ({
        ...r,
        answers: r.answers
          .filter((a) => ['q_3', 'q_4', 'q_5'].includes(a.questionId))
          .map((a) => ({
            questionId: a.questionId,
            value: labels[a.questionId]
              ? Array.isArray(a.value)
                ? a.value.map((v) => labels[a.questionId]![v])
                : labels[a.questionId]![a.value as string]
              : a.value,
          })),
      })),
    );
  });
});

describe('XLSX', () => {
  it('one sheet with the CSV layout and typed cells: dates as dates, numbers as numbers', async () => {
    const { export: done, bytes } = await exportToBuffer(live, surveyId, { format: 'xlsx' });
    expect(done.size).toBe(bytes.length);
    const workbook = await readXlsx(bytes);
    expect(workbook.worksheets.map((w) => w.name)).toEqual(['Responses']);
    const sheet = workbook.worksheets[0]!;
    const values = (n: number) => (sheet.getRow(n).values as unknown[]).slice(1);
    expect(values(1)).toEqual([...FIXED, 'q_1', 'q_2', 'q_3', 'q_4', 'q_5']);
    expect(sheet.actualRowCount).toBe(25);
    stored.forEach((r, i) => {
      const row = sheet.getRow(i + 2);
      expect(row.getCell(1).value).toBe(r.id);
      expect(row.getCell(2).value).toBeInstanceOf(Date);
      expect((row.getCell(2).value as Date).toISOString()).toBe(r.submittedAt);
      expect(row.getCell(3).value).toBe(r.respondentExternalId);
      expect(row.getCell(4).value).toBe(r.distributionId);
      expect(row.getCell(5).value).toBe(r.language);
      const byQ = new Map(r.answers.map((a) => [a.questionId, a.value]));
      expect(row.getCell(6).value).toBe(byQ.get('q_1'));
      expect(typeof row.getCell(6).value).toBe('number');
      expect(row.getCell(7).value).toBe(byQ.get('q_2') ?? null);
      expect(row.getCell(8).value).toBe(byQ.get('q_3') ?? null);
      expect(row.getCell(9).value).toBe(cell('q_4', byQ.get('q_4'), false) || null);
      // XML normalises CR LF inside text to LF (a documented property of the format).
      expect(row.getCell(10).value).toBe((byQ.get('q_5') as string).replaceAll('\r\n', '\n'));
    });
  });
});

describe('an empty survey', () => {
  it('gives a header-only CSV, an empty array, an empty NDJSON file and a header-only sheet', async () => {
    const empty = await activeSurvey(live);
    const csv = await exportToBuffer(live, empty.id, { format: 'csv' });
    expect(csv.export).toMatchObject({ rowCount: 0, progress: 100 });
    expect(await parseCsv(csv.bytes.toString('utf8'))).toEqual([[...FIXED, 'q_1', 'q_2', 'q_3', 'q_4', 'q_5']]);
    expect(JSON.parse((await exportToBuffer(live, empty.id, { format: 'json' })).bytes.toString('utf8'))).toEqual([]);
    const ndjson = await exportToBuffer(live, empty.id, { format: 'ndjson' });
    expect(ndjson.export.size).toBe(0);
    expect(ndjson.bytes.length).toBe(0);
    const sheet = (await readXlsx((await exportToBuffer(live, empty.id, { format: 'xlsx' })).bytes)).worksheets[0]!;
    expect(sheet.actualRowCount).toBe(1);
  });
});

describe('validation', () => {
  it('refuses what cannot be exported, listing every problem', async () => {
    const { error, response } = await live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: surveyId } },
      body: {
        format: 'json',
        bom: true,
        questionIds: ['q_1', 'q_99'],
        submittedAfter: '2026-11-02T00:00:00Z',
        submittedBefore: '2026-11-01T00:00:00Z',
      },
    });
    expect(response.status).toBe(400);
    expect(error?.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/bom', code: 'invalid_value' }),
        expect.objectContaining({ path: '/body/questionIds/1', code: 'not_found' }),
        expect.objectContaining({ path: '/body/submittedBefore', code: 'out_of_range' }),
      ]),
    );
    const bad = await live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: surveyId } },
      body: { format: 'pdf' as never },
    });
    expect(bad.response.status).toBe(400);
    const since = await live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: surveyId } },
      body: { format: 'csv', sinceExport: 'exp_01JD3MC6N2V8H4XJ9P5R7T1Q0D' },
    });
    expect(since.response.status).toBe(400);
    expect(since.error?.error.details?.[0]).toMatchObject({ path: '/body/sinceExport', code: 'not_found' });
    const unknown = await live.POST('/api/v1/surveys/{id}/responses/export', {
      params: { path: { id: 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8' } },
      body: { format: 'csv' },
    });
    expect(unknown.response.status).toBe(404);
  });
});
