/**
 * The layout of CSV and XLSX files (`ExportFormat`'s table) over a survey of every question type and option:
 * headers by ids without a language and by that language's texts and labels with one, the same ids after the
 * launched survey is reworded, every cell of every row against the answers sent, and the `distributionId` and
 * `language` columns as NDJSON has them (responses through a distribution, in two languages and in none).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import ExcelJS from 'exceljs';
import { startTestService, type TestService } from '../helpers/service.js';
import { waitForStatus } from '../distributions/fixtures.js';
import { exportToBuffer, parseCsv, readXlsx, tenant, type Answer, type ExportRequest } from './fixtures.js';

type QuestionInput = components['schemas']['QuestionInput'];
type ExportRecord = components['schemas']['ExportRecord'];
type Cell = string | number | null;

const questions: QuestionInput[] = [
  { id: 'nps', type: 'nps', text: 'Would you recommend us?', allowNotApplicable: true },
  {
    id: 'rating',
    type: 'rating',
    text: 'Tools',
    required: false,
    min: 1,
    max: 5,
    minLabel: 'Bad',
    maxLabel: 'Good',
    allowNotApplicable: true,
  },
  {
    id: 'where',
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: [
      { id: 'office', label: 'Office' },
      { id: 'home', label: 'Home' },
    ],
    allowOther: true,
  },
  {
    id: 'benefits',
    type: 'multiple_choice',
    text: 'Benefits?',
    required: false,
    choices: [
      { id: 'learn', label: 'Learning' },
      { id: 'flex', label: 'Flex' },
      { id: 'health', label: 'Health' },
    ],
    minSelections: 1,
    maxSelections: 3,
    allowOther: true,
  },
  { id: 'comment', type: 'text', text: 'Anything else?', required: false, maxLength: 500 },
  {
    id: 'grid',
    type: 'matrix',
    text: 'How much do you agree?',
    required: false,
    rows: [
      { id: 'expect', text: 'I know what is expected of me at work' },
      { id: 'tools', text: 'I have the tools I need' },
    ],
    scale: { min: 1, max: 5, minLabel: 'Disagree', maxLabel: 'Agree' },
    allowNotApplicable: true,
  },
  {
    id: 'often',
    type: 'matrix',
    text: 'How often?',
    required: false,
    rows: [
      { id: 'meetings', text: 'Team meetings' },
      { id: 'reviews', text: 'Reviews' },
    ],
    columns: [
      { id: 'never', label: 'Never' },
      { id: 'weekly', label: 'Weekly' },
    ],
  },
  {
    id: 'rank',
    type: 'ranking',
    text: 'Rank these benefits',
    required: false,
    choices: [
      { id: 'pay', label: 'Pay' },
      { id: 'time', label: 'Time off' },
      { id: 'growth', label: 'Growth' },
    ],
  },
  { id: 'years', type: 'number', text: 'Years at the company', required: false, min: 0, max: 60, integer: false },
  { id: 'start', type: 'date', text: 'Your start date', required: false, min: '1990-01-01', max: '2026-12-31' },
];

/** The German translation; `years` is left untranslated (its column falls back to the default language). */
const german: components['schemas']['SurveyTranslationInput'] = {
  title: 'Alles',
  questions: {
    nps: { text: 'Würden Sie uns empfehlen?' },
    rating: { text: 'Arbeitsmittel', minLabel: 'Schlecht', maxLabel: 'Gut' },
    where: { text: 'Wo arbeiten Sie?', choices: { office: 'Im Büro', home: 'Zu Hause' } },
    benefits: { text: 'Leistungen?', choices: { learn: 'Lernen', flex: 'Flexibel', health: 'Gesundheit' } },
    comment: { text: 'Noch etwas?' },
    grid: {
      text: 'Wie sehr stimmen Sie zu?',
      rows: { expect: 'Ich weiß, was von mir erwartet wird', tools: 'Ich habe die nötigen Werkzeuge' },
    },
    often: {
      text: 'Wie oft?',
      rows: { meetings: 'Teambesprechungen', reviews: 'Beurteilungen' },
      columns: { never: 'Nie', weekly: 'Wöchentlich' },
    },
    rank: { text: 'Ordnen Sie die Leistungen', choices: { pay: 'Gehalt', time: 'Freizeit', growth: 'Entwicklung' } },
    start: { text: 'Ihr Eintrittsdatum' },
  },
};

const FIXED = ['responseId', 'submittedAt', 'respondentExternalId', 'distributionId', 'language'];

/** The header without `language`: ids only, as the contract's table says. */
const BY_IDS = [
  ...FIXED,
  'nps',
  'rating',
  'where',
  'where.other',
  'benefits',
  'benefits.other',
  'comment',
  'grid.expect',
  'grid.tools',
  'often.meetings',
  'often.reviews',
  'rank.pay',
  'rank.time',
  'rank.growth',
  'years',
  'start',
];

/** The header with `language: de`: texts and labels in German ("Other" in the answer page's German). */
const IN_GERMAN = [
  ...FIXED,
  'Würden Sie uns empfehlen?',
  'Arbeitsmittel',
  'Wo arbeiten Sie?',
  'Wo arbeiten Sie? · Sonstiges',
  'Leistungen?',
  'Leistungen? · Sonstiges',
  'Noch etwas?',
  'Wie sehr stimmen Sie zu? · Ich weiß, was von mir erwartet wird',
  'Wie sehr stimmen Sie zu? · Ich habe die nötigen Werkzeuge',
  'Wie oft? · Teambesprechungen',
  'Wie oft? · Beurteilungen',
  'Ordnen Sie die Leistungen · Gehalt',
  'Ordnen Sie die Leistungen · Freizeit',
  'Ordnen Sie die Leistungen · Entwicklung',
  'Years at the company',
  'Ihr Eintrittsdatum',
];

/** Choice and column labels in German, by question and id, for `choiceValues: labels`. */
const germanLabels: Record<string, Record<string, string>> = {
  where: german.questions!.where!.choices!,
  benefits: german.questions!.benefits!.choices!,
  often: german.questions!.often!.columns!,
};

interface Sent {
  answers: Answer[];
  language?: string;
  /** Answered as a respondent the survey's distribution reached. */
  respondent?: string;
}

const sent: Sent[] = [
  {
    language: 'en',
    answers: [
      { questionId: 'nps', value: 9 },
      { questionId: 'rating', value: 4 },
      { questionId: 'where', value: 'other', other: 'Coworking space' },
      { questionId: 'benefits', value: ['learn', 'other'], other: 'Gym' },
      { questionId: 'comment', value: 'Fine, "really"; thanks' },
      { questionId: 'grid', value: { expect: 4, tools: null } },
      { questionId: 'often', value: { meetings: 'weekly' } },
      { questionId: 'rank', value: ['growth', 'pay', 'time'] },
      { questionId: 'years', value: 2.5 },
      { questionId: 'start', value: '2019-03-04' },
    ],
  },
  {
    language: 'de',
    answers: [
      { questionId: 'nps', value: null },
      { questionId: 'rating', value: null },
      { questionId: 'where', value: 'home' },
      { questionId: 'benefits', value: ['flex', 'health'] },
      { questionId: 'grid', value: { expect: 2, tools: 5 } },
      { questionId: 'often', value: { meetings: 'never', reviews: 'weekly' } },
      { questionId: 'rank', value: ['pay', 'time', 'growth'] },
      { questionId: 'years', value: 0 },
    ],
  },
  { answers: [{ questionId: 'nps', value: 0 }] },
  {
    respondent: 'P-1',
    language: 'de',
    answers: [
      { questionId: 'nps', value: 10 },
      { questionId: 'where', value: 'office' },
      { questionId: 'rank', value: ['time', 'growth', 'pay'] },
      { questionId: 'start', value: '2024-12-31' },
    ],
  },
  {
    respondent: 'P-2',
    answers: [
      { questionId: 'nps', value: 7 },
      { questionId: 'years', value: 12 },
      { questionId: 'often', value: { reviews: 'never' } },
    ],
  },
];

/**
 * The answer cells a response's row must hold, written out per question type (not by the code under test):
 * numbers as numbers, N/A and unanswered as null, choice ids (or labels), places of ranked choices.
 */
function answerCells(answers: Answer[], labels: Record<string, Record<string, string>> | null): Cell[] {
  const by = new Map(answers.map((a) => [a.questionId, a]));
  const value = (id: string) => by.get(id)?.value ?? null;
  const label = (q: string, id: string) => (labels ? (labels[q]?.[id] ?? id) : id);
  const row = (q: string, r: string) => {
    const v = (value(q) as Record<string, string | number | null> | null)?.[r];
    return v === undefined || v === null ? null : typeof v === 'string' ? label(q, v) : v;
  };
  const place = (c: string) => {
    const ranked = value('rank') as string[] | null;
    return ranked ? ranked.indexOf(c) + 1 : null;
  };
  const where = value('where') as string | null;
  const benefits = value('benefits') as string[] | null;
  return [
    value('nps') as number | null,
    value('rating') as number | null,
    where === null ? null : label('where', where),
    by.get('where')?.other ?? null,
    benefits === null ? null : benefits.map((b) => label('benefits', b)).join(';'),
    by.get('benefits')?.other ?? null,
    value('comment') as string | null,
    row('grid', 'expect'),
    row('grid', 'tools'),
    row('often', 'meetings'),
    row('often', 'reviews'),
    place('pay'),
    place('time'),
    place('growth'),
    value('years') as number | null,
    value('start') as string | null,
  ];
}

let t: TestService;
let live: Awaited<ReturnType<typeof tenant>>['live'];
let surveyId: string;
let distributionId: string;
/** The stored responses' ids, in the order of `sent`. */
const ids: string[] = [];
/** The NDJSON export's records by response id. */
let records: Map<string, ExportRecord>;

beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenant(t));
  const survey = await live.unwrap(
    live.POST('/api/v1/surveys', { body: { title: 'Everything', languages: ['en', 'de'], questions } }),
  );
  surveyId = survey.id;
  await live.unwrap(
    live.PUT('/api/v1/surveys/{id}/translations/{language}', {
      params: { path: { id: surveyId, language: 'de' } },
      body: german,
    }),
  );
  await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } }));
  for (const externalId of ['P-1', 'P-2'])
    await live.unwrap(
      live.PUT('/api/v1/respondents/{externalId}', {
        params: { path: { externalId } },
        body: { email: `${externalId.toLowerCase()}@example.com` },
      }),
    );
  const distribution = await live.unwrap(
    live.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: { method: 'link' } },
    }),
  );
  distributionId = distribution.id;
  await waitForStatus(live, surveyId, distributionId, ['sent']);
  for (const s of sent) {
    const stored = await live.unwrap(
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: {
          answers: s.answers,
          ...(s.language ? { language: s.language } : {}),
          ...(s.respondent ? { respondentExternalId: s.respondent } : {}),
        },
      }),
    );
    ids.push(stored.id);
  }
  const ndjson = await exportToBuffer(live, surveyId, { format: 'ndjson' });
  records = new Map(
    ndjson.bytes
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ExportRecord)
      .map((r) => [r.id, r]),
  );
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** The rows of a CSV export, by response id (the header apart). */
async function csv(request: Omit<ExportRequest, 'format'>) {
  const { bytes } = await exportToBuffer(live, surveyId, { format: 'csv', ...request });
  const [header, ...rows] = await parseCsv(bytes.toString('utf8'));
  return { header: header!, rows: new Map(rows.map((r) => [r[0]!, r])) };
}

/** The rows of an XLSX export as exceljs reads them back, by response id (the header apart). */
async function xlsx(request: Omit<ExportRequest, 'format'>) {
  const { bytes } = await exportToBuffer(live, surveyId, { format: 'xlsx', ...request });
  const sheet = (await readXlsx(bytes)).worksheets[0]!;
  const values = (row: ExcelJS.Row) =>
    Array.from({ length: BY_IDS.length }, (_, i) => {
      const value = row.getCell(i + 1).value;
      return value === undefined ? null : value;
    });
  const rows = new Map<string, unknown[]>();
  for (let n = 2; n <= sheet.actualRowCount; n++)
    rows.set(String(sheet.getRow(n).getCell(1).value), values(sheet.getRow(n)));
  return { header: values(sheet.getRow(1)), rows };
}

describe('the setup', () => {
  it('has responses through the distribution, in two languages and in none, as NDJSON records them', () => {
    expect(records.size).toBe(sent.length);
    expect(ids.map((id) => records.get(id)!.distributionId)).toEqual([
      null,
      null,
      null,
      distributionId,
      distributionId,
    ]);
    expect(ids.map((id) => records.get(id)!.language)).toEqual(['en', 'de', null, 'de', null]);
  });
});

describe('CSV', () => {
  it('names every column by ids without a language and holds each answer as the layout table says', async () => {
    const { header, rows } = await csv({});
    expect(header).toEqual(BY_IDS);
    expect(rows.size).toBe(sent.length);
    sent.forEach((s, i) => {
      const record = records.get(ids[i]!)!;
      const expected = [
        record.id,
        record.submittedAt,
        record.respondentExternalId,
        record.distributionId,
        record.language,
        ...answerCells(s.answers, null),
      ].map((v) => (v === null ? '' : String(v)));
      expect(rows.get(ids[i]!), `response ${i}`).toEqual(expected);
    });
  });

  it('names columns by texts and labels in the export language, with labels in it', async () => {
    const { header, rows } = await csv({ language: 'de', choiceValues: 'labels' });
    expect(header).toEqual(IN_GERMAN);
    sent.forEach((s, i) => {
      const row = rows.get(ids[i]!)!;
      expect(row.slice(3, 5), `response ${i}`).toEqual([
        records.get(ids[i]!)!.distributionId ?? '',
        records.get(ids[i]!)!.language ?? '',
      ]);
      expect(row.slice(5), `response ${i}`).toEqual(
        answerCells(s.answers, germanLabels).map((v) => (v === null ? '' : String(v))),
      );
    });
  });

  it('keeps the layout for a subset of questions', async () => {
    const { header } = await csv({ questionIds: ['often', 'where'] });
    expect(header).toEqual([...FIXED, 'where', 'where.other', 'often.meetings', 'often.reviews']);
  });
});

describe('XLSX', () => {
  it('has the CSV header by ids and typed cells: numbers for scales, places and numbers', async () => {
    const { header, rows } = await xlsx({});
    expect(header).toEqual(BY_IDS);
    expect(rows.size).toBe(sent.length);
    sent.forEach((s, i) => {
      const record = records.get(ids[i]!)!;
      const row = rows.get(ids[i]!)!;
      expect(row[1]).toBeInstanceOf(Date);
      expect((row[1] as Date).toISOString()).toBe(record.submittedAt);
      expect(row.slice(2), `response ${i}`).toEqual([
        record.respondentExternalId,
        record.distributionId,
        record.language,
        ...answerCells(s.answers, null),
      ]);
    });
  });

  it('has the German header and labels with language: de', async () => {
    const { header, rows } = await xlsx({ language: 'de', choiceValues: 'labels' });
    expect(header).toEqual(IN_GERMAN);
    sent.forEach((s, i) => {
      const record = records.get(ids[i]!)!;
      expect(rows.get(ids[i]!)!.slice(3), `response ${i}`).toEqual([
        record.distributionId,
        record.language,
        ...answerCells(s.answers, germanLabels),
      ]);
    });
  });
});

describe('a launched survey reworded', () => {
  it('keeps the headers by ids; headers in a language follow the new words', async () => {
    const survey = await live.unwrap(live.GET('/api/v1/surveys/{id}', { params: { path: { id: surveyId } } }));
    const reworded = survey.questions.map((q) => {
      if (q.type === 'matrix' && q.id === 'grid')
        return { ...q, rows: q.rows.map((r) => (r.id === 'expect' ? { ...r, text: 'I know what is expected' } : r)) };
      if (q.type === 'ranking')
        return { ...q, choices: q.choices.map((c) => (c.id === 'pay' ? { ...c, label: 'Salary' } : c)) };
      if (q.id === 'where') return { ...q, text: 'Where are you based?' };
      return q;
    });
    await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { params: { path: { id: surveyId } }, body: { questions: reworded } }),
    );
    expect((await csv({})).header).toEqual(BY_IDS);
    expect((await xlsx({})).header).toEqual(BY_IDS);
    const english = (await csv({ language: 'en' })).header;
    expect(english).toContain('How much do you agree? · I know what is expected');
    expect(english).toContain('Rank these benefits · Salary');
    expect(english).toContain('Where are you based? · Other');
    expect(english).not.toContain('How much do you agree? · I know what is expected of me at work');
  });
});
