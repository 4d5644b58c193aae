/** Shared builders for the exports tests: a survey of every question type, answers, files parsed back. */
import { citusMode } from '../citus/cluster.js';
import { readFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseString } from '@fast-csv/parse';
import ExcelJS from 'exceljs';
import { exportResponsesToFile, type components, type SurveyServiceClient } from '@survey-service/sdk';
import { sql } from 'kysely';
import type { TestService } from '../helpers/service.js';

export type ExportRequest = components['schemas']['ExportRequest'];
export type Answer = components['schemas']['Answer'];
export type Export = components['schemas']['Export'];

/** Tests send many requests; the PRO limit (300/min) would otherwise turn some into 429s. */
export async function tenant(t: TestService) {
  const created = await t.createTenant();
  await t.db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: 100000, rate_limit_per_day: 1000000 })
    .where('id', '=', created.organizationId)
    .execute();
  return { ...created, live: t.client(created.liveKey), test: t.client(created.testKey) };
}

export async function activeSurvey(client: SurveyServiceClient) {
  const survey = await client.unwrap(
    client.POST('/api/v1/surveys', {
      body: {
        title: 'Export me',
        questions: [
          { type: 'nps', text: 'Recommend us?' },
          { type: 'rating', text: 'Tools', required: false },
          {
            type: 'single_choice',
            text: 'Where?',
            required: false,
            choices: [{ label: 'Office; HQ' }, { label: 'Home' }, { label: 'Café "Zürich"' }],
          },
          {
            type: 'multiple_choice',
            text: 'Benefits?',
            required: false,
            choices: [{ label: 'Learning' }, { label: 'Flex, remote' }, { label: 'Health' }],
            minSelections: 1,
            maxSelections: 3,
          },
          { type: 'text', text: 'Anything else?', required: false, maxLength: 2000 },
        ],
      },
    }),
  );
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  return survey;
}

/** Free text that breaks naive CSV: commas, quotes, new lines, non-Latin scripts, emoji, a leading `=`. */
export const trickyTexts = [
  'plain',
  'comma, and "quotes" inside',
  'line one\nline two\r\nline three',
  'Ünïcödé — 日本語 — עברית — 🎉👍🏽',
  '=SUM(A1:A2) ;semi;colons;',
  '  leading and trailing spaces  ',
];

export function answersFor(i: number): Answer[] {
  const answers: Answer[] = [{ questionId: 'q_1', value: i % 11 }];
  if (i % 3 !== 0) answers.push({ questionId: 'q_2', value: 1 + (i % 5) });
  if (i % 2 === 0) answers.push({ questionId: 'q_3', value: `c_${1 + (i % 3)}` });
  if (i % 4 !== 1) answers.push({ questionId: 'q_4', value: i % 2 ? ['c_1', 'c_2'] : ['c_3'] });
  answers.push({ questionId: 'q_5', value: trickyTexts[i % trickyTexts.length]! });
  return answers;
}

export async function submit(client: SurveyServiceClient, surveyId: string, count: number, from = 0) {
  const out = [];
  for (let i = from; i < from + count; i++) {
    out.push(
      await client.unwrap(
        client.POST('/api/v1/surveys/{id}/responses', {
          params: { path: { id: surveyId } },
          body: { respondentExternalId: `E-${i}`, answers: answersFor(i) },
        }),
      ),
    );
  }
  return out;
}

/** Every stored response of a survey, oldest first (the export's order). */
export async function storedResponses(client: SurveyServiceClient, surveyId: string) {
  const all = [];
  for await (const r of client.paginate('/api/v1/surveys/{id}/responses', {
    params: { path: { id: surveyId }, query: { pageSize: 100 } },
  }))
    all.push(r);
  return all.sort((a, b) => a.submittedAt.localeCompare(b.submittedAt) || a.id.localeCompare(b.id));
}

let dir: string | undefined;
export async function tempFile(name: string): Promise<string> {
  dir ??= await mkdtemp(path.join(tmpdir(), 'exports-test-'));
  return path.join(dir, `${Date.now()}-${Math.random().toString(36).slice(2)}-${name}`);
}

/** Runs an export through the SDK helper and returns it with the file's bytes. */
export async function exportToBuffer(client: SurveyServiceClient, surveyId: string, request: ExportRequest) {
  const file = await tempFile(`export.${request.format}`);
  const done = await exportResponsesToFile(client, surveyId, request, file, {
    timeoutMs: 120_000,
    initialDelayMs: 50,
    maxDelayMs: 250,
  });
  return { export: done, bytes: await readFile(file), file };
}

export function parseCsv(text: string): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    const rows: string[][] = [];
    parseString(text, { headers: false, ignoreEmpty: false })
      .on('error', reject)
      .on('data', (row: string[]) => rows.push(row))
      .on('end', () => resolve(rows));
  });
}

export async function readXlsx(bytes: Buffer) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  return workbook;
}

/**
 * Inserts `count` responses straight into the table (fast, for large exports): digit-only ids, one second
 * apart from `start`, a text answer of `textLength` characters. The rows skip the analytics row trigger, as the
 * exports that read them never look at analytics and the trigger is most of an insert's cost; every other trigger
 * (the writing transaction's stamp that increments read) still runs.
 */
export async function bulkInsert(
  t: TestService,
  organizationId: string,
  surveyId: string,
  count: number,
  options: { start?: Date; textLength?: number; prefix?: string } = {},
) {
  const start = options.start ?? new Date('2026-01-01T00:00:00Z');
  const text = 'x'.repeat(options.textLength ?? 20);
  const prefix = options.prefix ?? '9';
  await t.db.transaction().execute(async (tx) => {
    // Citus changes triggers of a distributed table only when told that their statements stay on one shard.
    if (citusMode) await sql`set local citus.enable_unsafe_triggers to on`.execute(tx);
    await sql`alter table responses disable trigger analytics_responses_insert`.execute(tx);
    await sql`
      insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at)
      select 'rsp_' || ${prefix} || lpad(i::text, 25, '0'), ${surveyId}, ${organizationId}, 'LIVE', 'E-' || i, null,
        jsonb_build_array(jsonb_build_object('questionId', 'q_1', 'value', i % 11), jsonb_build_object('questionId', 'q_5', 'value', ${text} || i)),
        ${start}::timestamptz + i * interval '1 second'
      from generate_series(1, ${count}) as i`.execute(tx);
    await sql`alter table responses enable trigger analytics_responses_insert`.execute(tx);
  });
}
