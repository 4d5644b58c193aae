/**
 * The question types matrix, ranking, number and date, and the options "Other" and N/A, through every layer a
 * customer meets: the survey's validation, submissions (every bad answer a 400 naming its path and code, nothing
 * stored), the answer page without a script, exports (CSV columns per matrix row and ranked item, JSON's
 * `notApplicable`), and static analytics (matrix rows as ratings, ranks, exact date figures, number figures, N/A
 * and Other counted apart from the scale).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import {
  activeSurvey,
  startWithSmtp,
  tenant,
  waitForStatus,
  type Client,
  embedUrl,
} from '../distributions/fixtures.js';
import type { TestSmtp } from '../distributions/smtp.js';
import { exportToBuffer, parseCsv } from '../exports/fixtures.js';
import { repoRoot } from '../helpers/process.js';
import type { TestService } from '../helpers/service.js';

type QuestionInput = components['schemas']['QuestionInput'];
type Answer = components['schemas']['Answer'];

let t: TestService;
let smtp: TestSmtp;
let live: Client;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
  ({ live } = await tenant(t));
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** A pulse survey of every new type: a Likert grid, a labelled grid, a ranking, a number, a date, Other and N/A. */
const everyType: QuestionInput[] = [
  {
    type: 'matrix',
    text: 'How much do you agree?',
    rows: [{ text: 'I know what is expected of me' }, { text: 'I have the tools I need' }],
    scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
    allowNotApplicable: true,
  },
  {
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
    type: 'ranking',
    text: 'Rank these benefits',
    choices: [
      { id: 'pay', label: 'Pay' },
      { id: 'time', label: 'Time off' },
      { id: 'growth', label: 'Growth' },
    ],
  },
  { type: 'number', text: 'Years at the company', min: 0, max: 60, integer: true },
  { type: 'date', text: 'Your start date', required: false, min: '1990-01-01', max: '2026-12-31' },
  {
    type: 'single_choice',
    text: 'Where do you work?',
    choices: [{ label: 'Office' }, { label: 'Home' }],
    allowOther: true,
  },
  { type: 'rating', text: 'Your manager', allowNotApplicable: true, required: false },
];

const submit = (surveyId: string, answers: Answer[]) =>
  live.POST('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } }, body: { answers } });

const storedCount = async (surveyId: string) =>
  Number(
    (await sql<{ n: string }>`select count(*) as n from responses where survey_id = ${surveyId}`.execute(t.db)).rows[0]!
      .n,
  );

const good = (overrides: Record<string, unknown> = {}): Answer[] =>
  Object.entries({
    q_1: { r_1: 4, r_2: null },
    q_2: { meetings: 'weekly' },
    q_3: ['growth', 'pay', 'time'],
    q_4: 7,
    q_5: '2019-03-04',
    q_6: 'c_1',
    q_7: 3,
    ...overrides,
  })
    .filter(([, value]) => value !== undefined)
    .map(([questionId, value]) => ({ questionId, value }) as Answer);

describe('the survey', () => {
  it('stores the new types with their defaults and ids', async () => {
    const created = await live.unwrap(live.POST('/api/v1/surveys', { body: { title: 'Pulse', questions: everyType } }));
    const [grid, labelled, ranking, number, date, choice, rating] = created.questions;
    expect(grid).toMatchObject({
      type: 'matrix',
      rows: [
        { id: 'r_1', text: 'I know what is expected of me' },
        { id: 'r_2', text: 'I have the tools I need' },
      ],
      scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
      columns: null,
      allowNotApplicable: true,
    });
    expect(labelled).toMatchObject({
      scale: null,
      columns: [{ id: 'never' }, { id: 'weekly' }],
      allowNotApplicable: false,
    });
    expect(ranking).toMatchObject({ type: 'ranking', choices: [{ id: 'pay' }, { id: 'time' }, { id: 'growth' }] });
    expect(number).toMatchObject({ type: 'number', min: 0, max: 60, integer: true });
    expect(date).toMatchObject({ type: 'date', min: '1990-01-01', max: '2026-12-31' });
    expect(choice).toMatchObject({ allowOther: true });
    expect(rating).toMatchObject({ allowNotApplicable: true });
  });

  it("accepts the contract's Likert example as it is, and launches it", async () => {
    const document = JSON.parse(await readFile(path.join(repoRoot, 'openapi/bundled/openapi.json'), 'utf8')) as {
      paths: Record<
        string,
        { post: { requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> } } }
      >;
    };
    const example =
      document.paths['/api/v1/surveys']!.post.requestBody.content['application/json']!.examples.likert!.value;
    const created = await live.unwrap(live.POST('/api/v1/surveys', { body: example as never }));
    expect(created.questions.map((q) => q.type)).toEqual([
      'matrix',
      'nps',
      'text',
      'ranking',
      'number',
      'date',
      'single_choice',
    ]);
    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: created.id } } }));
  });

  it('refuses impossible definitions, each at its path', async () => {
    const bad = await live.POST('/api/v1/surveys', {
      body: {
        title: 'Bad',
        questions: [
          {
            type: 'matrix',
            text: 'Both',
            rows: [{ text: 'a' }, { text: 'b' }],
            scale: { max: 5 },
            columns: [{ label: 'x' }, { label: 'y' }],
          },
          {
            type: 'matrix',
            text: 'Rows',
            rows: [
              { id: 'r', text: 'a' },
              { id: 'r', text: 'b' },
            ],
            scale: { max: 5 },
          },
          { type: 'number', text: 'Bounds', min: 10, max: 1 },
          {
            type: 'single_choice',
            text: 'Other',
            allowOther: true,
            choices: [{ id: 'other', label: 'x' }, { label: 'y' }],
          },
        ],
      },
    });
    expect(bad.response.status).toBe(400);
    const details = bad.error!.error.details!.map((d) => [d.path, d.code]);
    expect(details).toEqual(
      expect.arrayContaining([
        ['/body/questions/0', 'one_of'],
        ['/body/questions/1/rows/1/id', 'duplicate'],
        ['/body/questions/2/min', 'out_of_range'],
        ['/body/questions/3/choices/0/id', 'duplicate'],
      ]),
    );
    // The schema's own checks come first (an impossible date, too few choices), and name their paths too.
    const schema = await live.POST('/api/v1/surveys', {
      body: { title: 'Bad', questions: [{ type: 'date', text: 'Dates', min: '2026-02-30' }] },
    });
    expect(schema.error!.error.details!.map((d) => [d.path, d.code])).toContainEqual([
      '/body/questions/0/min',
      'format',
    ]);
  });
});

describe('submissions', () => {
  it('accepts every type, Other and N/A, and records them as sent', async () => {
    const surveyId = await activeSurvey(live, { questions: everyType });
    const stored = await live.unwrap(
      submit(surveyId, [
        ...good({ q_6: 'other', q_7: null }).filter((a) => a.questionId !== 'q_6'),
        { questionId: 'q_6', value: 'other', other: 'Coworking space' },
      ]),
    );
    expect(stored.answers).toEqual(
      expect.arrayContaining([
        { questionId: 'q_1', value: { r_1: 4, r_2: null } },
        { questionId: 'q_3', value: ['growth', 'pay', 'time'] },
        { questionId: 'q_6', value: 'other', other: 'Coworking space' },
        { questionId: 'q_7', value: null },
      ]),
    );
  });

  it('refuses each bad answer with its path and code, and stores nothing', async () => {
    const surveyId = await activeSurvey(live, { questions: everyType });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ q_1: { r_1: 4, r_9: 2, r_2: 1 } }, '/body/answers/0/value/r_9', 'not_found'],
      [{ q_1: { r_1: 4 } }, '/body/answers/0/value', 'required'],
      [{ q_1: { r_1: 6, r_2: 1 } }, '/body/answers/0/value/r_1', 'out_of_range'],
      [{ q_2: { meetings: 'daily' } }, '/body/answers/1/value/meetings', 'not_found'],
      [{ q_2: { meetings: null } }, '/body/answers/1/value/meetings', 'answer_type'],
      [{ q_3: ['growth', 'pay'] }, '/body/answers/2/value', 'required'],
      [{ q_3: ['growth', 'pay', 'pay'] }, '/body/answers/2/value/2', 'duplicate'],
      [{ q_4: 7.5 }, '/body/answers/3/value', 'out_of_range'],
      [{ q_4: 61 }, '/body/answers/3/value', 'out_of_range'],
      [{ q_4: '7' }, '/body/answers/3/value', 'answer_type'],
      [{ q_5: '2019-02-29' }, '/body/answers/4/value', 'format'],
      [{ q_5: '1989-12-31' }, '/body/answers/4/value', 'out_of_range'],
      [{ q_6: 'other' }, '/body/answers/5/other', 'required'],
      [{ q_4: null }, '/body/answers/3/value', 'answer_type'],
    ];
    for (const [overrides, path, code] of cases) {
      const refused = await submit(surveyId, good(overrides));
      expect(refused.response.status, JSON.stringify(overrides)).toBe(400);
      expect(
        refused.error!.error.details!.map((d) => [d.path, d.code]),
        JSON.stringify(overrides),
      ).toContainEqual([path, code]);
    }
    // "Other" text on a question without allowOther.
    const plain = await activeSurvey(live, {
      questions: [{ type: 'single_choice', text: 'Pick', choices: [{ label: 'A' }, { label: 'B' }] }],
    });
    const other = await submit(plain, [{ questionId: 'q_1', value: 'c_1', other: 'x' }]);
    expect(other.error!.error.details!.map((d) => [d.path, d.code])).toEqual([
      ['/body/answers/0/other', 'other_not_allowed'],
    ]);
    const otherChoice = await submit(plain, [{ questionId: 'q_1', value: 'other' }]);
    expect(otherChoice.error!.error.details![0]!.code).toBe('not_found');
    // A huge number is a 400, never a 5xx.
    const huge = await live.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: JSON.parse(`{"answers":[{"questionId":"q_4","value":1e400}]}`) as never,
    });
    expect(huge.response.status).toBe(400);
    expect(await storedCount(surveyId)).toBe(0);
    expect(await storedCount(plain)).toBe(0);
  });
});

describe('exports and analytics', () => {
  it('give a column per matrix row and ranked item, JSON N/A, and figures with N/A and Other apart', async () => {
    const surveyId = await activeSurvey(live, { questions: everyType });
    const answers: Answer[][] = [
      good(),
      good({ q_1: { r_1: 2, r_2: 5 }, q_3: ['pay', 'growth', 'time'], q_4: 3, q_5: '2021-07-01', q_7: null }),
      [
        ...good({ q_1: { r_1: 5, r_2: 3 }, q_2: undefined, q_4: 20, q_5: undefined, q_6: undefined }),
        { questionId: 'q_6', value: 'other', other: '=Hot desk' },
      ],
    ];
    for (const a of answers) await live.unwrap(submit(surveyId, a));

    const csv = await exportToBuffer(live, surveyId, { format: 'csv' });
    const rows = await parseCsv(csv.bytes.toString('utf8'));
    const header = rows[0]!;
    // Named by ids: a matrix row `<question>.<row>`, a ranked item `<question>.<choice>`, "Other" `<question>.other`.
    expect(header).toEqual([
      'responseId',
      'submittedAt',
      'respondentExternalId',
      'distributionId',
      'language',
      'q_1.r_1',
      'q_1.r_2',
      'q_2.meetings',
      'q_2.reviews',
      'q_3.pay',
      'q_3.time',
      'q_3.growth',
      'q_4',
      'q_5',
      'q_6',
      'q_6.other',
      'q_7',
    ]);
    // The first response: r_2 N/A is an empty cell; growth ranked 1st, pay 2nd, time 3rd; labels of columns.
    const first = rows.slice(1).find((r) => r[5] === '4')!;
    expect(first.slice(5, 17)).toEqual(['4', '', 'weekly', '', '2', '3', '1', '7', '2019-03-04', 'c_1', '', '3']);
    const third = rows.slice(1).find((r) => r[5] === '5')!;
    // Formula-like "Other" text is escaped like every user text.
    expect(third[14]).toBe('other');
    expect(third[15]).toBe("'=Hot desk");
    // With labels, matrix columns read as their labels too.
    const labelled = await parseCsv(
      (await exportToBuffer(live, surveyId, { format: 'csv', choiceValues: 'labels' })).bytes.toString('utf8'),
    );
    expect(labelled[0]).toEqual(header);
    expect(
      labelled
        .slice(1)
        .find((r) => r[5] === '4')!
        .slice(7, 8),
    ).toEqual(['Weekly']);

    const ndjson = await exportToBuffer(live, surveyId, { format: 'ndjson' });
    const records = ndjson.bytes
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as components['schemas']['ExportRecord']);
    const na = records.flatMap((r) => r.answers).find((a) => a.questionId === 'q_7' && a.value === null);
    expect(na).toEqual({ questionId: 'q_7', value: null, notApplicable: true });
    expect(records.flatMap((r) => r.answers)).toContainEqual({ questionId: 'q_6', value: 'other', other: '=Hot desk' });

    // Three responses: the lowest anonymity threshold there is.
    await live.unwrap(live.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 3 } }));
    const stats = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: surveyId } } }),
    );
    const byId = new Map(stats.questions.map((q) => [q.questionId, q]));
    const grid = byId.get('q_1') as components['schemas']['MatrixQuestionStats'];
    expect(grid.answeredCount).toBe(3);
    expect(grid.rows[0]).toMatchObject({
      rowId: 'r_1',
      answeredCount: 3,
      notApplicableCount: 0,
      average: 3.67,
      median: 4,
    });
    expect(grid.rows[1]).toMatchObject({
      rowId: 'r_2',
      answeredCount: 2,
      notApplicableCount: 1,
      average: 4,
      median: 4,
    });
    expect(grid.rows[1]!.distribution.map((d) => d.count)).toEqual([0, 0, 1, 0, 1]);
    const columns = byId.get('q_2') as components['schemas']['MatrixQuestionStats'];
    expect(columns.rows[0]!.columns).toEqual([
      { columnId: 'never', label: 'Never', count: 0, percentage: 0 },
      { columnId: 'weekly', label: 'Weekly', count: 2, percentage: 100 },
    ]);
    const ranking = byId.get('q_3') as components['schemas']['RankingQuestionStats'];
    expect(ranking.choices).toEqual([
      { choiceId: 'pay', label: 'Pay', meanRank: 1.67, rankedFirst: 1, rankedFirstShare: 33.3 },
      { choiceId: 'time', label: 'Time off', meanRank: 3, rankedFirst: 0, rankedFirstShare: 0 },
      { choiceId: 'growth', label: 'Growth', meanRank: 1.33, rankedFirst: 2, rankedFirstShare: 66.7 },
    ]);
    expect(byId.get('q_4')).toMatchObject({ answeredCount: 3, min: 3, max: 20, mean: 10, median: 7 });
    const numberHistogram = (byId.get('q_4') as components['schemas']['NumberQuestionStats']).histogram;
    expect(numberHistogram.reduce((n, bin) => n + bin.count, 0)).toBe(3);
    expect(byId.get('q_5')).toMatchObject({
      answeredCount: 2,
      min: '2019-03-04',
      max: '2021-07-01',
      median: '2019-03-04',
    });
    const dates = (byId.get('q_5') as components['schemas']['DateQuestionStats']).histogram;
    expect(dates[0]).toEqual({ from: '2019-03-01', to: '2019-04-01', count: 1 });
    expect(dates.at(-1)).toEqual({ from: '2021-07-01', to: '2021-08-01', count: 1 });
    // Three answered, one of them "Other" (counted apart from the choices, but an answer all the same).
    expect(byId.get('q_6')).toMatchObject({ answeredCount: 3, otherCount: 1 });
    // Smart analytics: each row of the Likert grid is a heatmap column, scored like a rating of its scale.
    const smart = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/analytics/smart', { params: { path: { id: surveyId } } }),
    );
    const gridColumns = smart.heatmap.questions.filter((c) => c.questionId === 'q_1');
    expect(gridColumns).toEqual([
      { questionId: 'q_1', rowId: 'r_1', text: 'I know what is expected of me', type: 'matrix', overall: 3.67 },
      { questionId: 'q_1', rowId: 'r_2', text: 'I have the tools I need', type: 'matrix', overall: 4 },
    ]);
    // The labelled grid has no scale to score: no columns.
    expect(smart.heatmap.questions.some((c) => c.questionId === 'q_2')).toBe(false);
    // N/A is apart from the scale: two ratings of 3, one N/A.
    expect(byId.get('q_7')).toMatchObject({ answeredCount: 2, average: 3, notApplicableCount: 1 });
  });
});

describe('translations of the new types', () => {
  it('take a grid’s rows and scale labels, list what is missing, and show them on the page in German', async () => {
    const surveyId = await activeSurvey(live, {
      questions: everyType,
      languages: ['en', 'de'],
      settings: { anonymous: true },
    });
    await live.unwrap(
      live.PUT('/api/v1/surveys/{id}/translations/{language}', {
        params: { path: { id: surveyId, language: 'de' } },
        body: {
          title: 'Umfrage',
          questions: {
            q_1: {
              text: 'Wie sehr stimmen Sie zu?',
              minLabel: 'Stimme gar nicht zu',
              maxLabel: 'Stimme voll zu',
              rows: { r_1: 'Ich weiß, was von mir erwartet wird', r_2: 'Ich habe die Werkzeuge, die ich brauche' },
            },
            q_2: { text: 'Wie oft?', columns: { never: 'Nie' } },
          },
        },
      }),
    );
    const read = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/translations/{language}', { params: { path: { id: surveyId, language: 'de' } } }),
    );
    expect(read.missing).toEqual(
      expect.arrayContaining(['/questions/q_2/rows/meetings', '/questions/q_2/columns/weekly', '/questions/q_3/text']),
    );
    expect(read.missing).not.toContain('/questions/q_1/rows/r_1');
    // A row the grid does not have is refused at its path, and nothing changes.
    const unknown = await live.PUT('/api/v1/surveys/{id}/translations/{language}', {
      params: { path: { id: surveyId, language: 'de' } },
      body: { title: 'Umfrage', questions: { q_1: { text: 'x', rows: { r_9: 'y' } } } },
    });
    expect(unknown.response.status).toBe(400);
    expect(unknown.error!.error.details!.map((d) => d.path)).toContain('/body/questions/q_1/rows/r_9');

    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'embed' } },
      }),
    );
    const done = await waitForStatus(live, surveyId, d.id, ['sent']);
    const url = embedUrl(done);
    const page = await (await fetch(url, { headers: { 'accept-language': 'de-DE,de;q=0.9' } })).text();
    expect(page).toContain('<th scope="row">Ich weiß, was von mir erwartet wird</th>');
    expect(page).toContain('1 (Stimme gar nicht zu)');
    expect(page).toContain('<th scope="col">Nie</th>');
    // Untranslated strings fall back to the default language.
    expect(page).toContain('<th scope="row">Team meetings</th>');
  });
});

describe('the answer page', () => {
  it('renders every type with labels and takes a post of each without a script', async () => {
    const surveyId = await activeSurvey(live, { questions: everyType, settings: { anonymous: true } });
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'embed' } },
      }),
    );
    const done = await waitForStatus(live, surveyId, d.id, ['sent']);
    const url = embedUrl(done);
    const page = await (await fetch(url)).text();
    expect(page).toContain('<table class="grid">');
    expect(page).toContain('aria-label="I know what is expected of me: 1 (Strongly disagree)"');
    expect(page).toContain('name="q_1.r_2" id="q_1.r_2-na" value="na"');
    expect(page).toContain('<select name="q_3.1" id="q_3.1"');
    expect(page).toContain('type="number" step="1" inputmode="decimal" name="q_4"');
    expect(page).toContain('type="date" name="q_5"');
    expect(page).toContain('name="q_6.other"');
    const post = (fields: Array<[string, string]>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    const fields: Array<[string, string]> = [
      ['survey.shown', 'q_1,q_2,q_3,q_4,q_5,q_6,q_7'],
      ['q_1.r_1', '4'],
      ['q_1.r_2', 'na'],
      ['q_3.1', 'time'],
      ['q_3.2', 'time'],
      ['q_3.3', 'pay'],
      ['q_4', '12'],
      ['q_5', '2020-05-06'],
      ['q_6', 'other'],
      ['q_6.other', 'On the road'],
      ['q_7', 'na'],
    ];
    // A place given twice is shown back with a plain message, and nothing is stored.
    const twice = await post(fields);
    expect(twice.status).toBe(400);
    expect(await twice.text()).toContain('Give each place a different item');
    expect(await storedCount(surveyId)).toBe(0);
    const ok = await post(fields.map(([k, v]) => [k, k === 'q_3.2' ? 'growth' : v]));
    expect(ok.status).toBe(200);
    const [stored] = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
    );
    expect(stored!.answers).toEqual([
      { questionId: 'q_1', value: { r_1: 4, r_2: null } },
      { questionId: 'q_3', value: ['time', 'growth', 'pay'] },
      { questionId: 'q_4', value: 12 },
      { questionId: 'q_5', value: '2020-05-06' },
      { questionId: 'q_6', value: 'other', other: 'On the road' },
      { questionId: 'q_7', value: null },
    ]);
  });
});
