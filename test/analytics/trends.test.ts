/**
 * Cycles: a question followed by its key across surveys, through the SDK over HTTP. Trends list every launched
 * survey that asked the keyed question, oldest first, with figures recomputed here from the raw answers and equal to
 * static analytics' for the same survey; a survey under the anonymity threshold is listed without figures. Smart
 * analytics' `compareTo=previousCycle` compares with the most recent earlier survey of the key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SurveyServiceError, type components } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { random } from './fixtures.js';

type QuestionInput = components['schemas']['QuestionInput'];
type Client = ReturnType<TestService['client']>;

let t: TestService;
let live: Client;
let organizationId: string;

const KEY = 'engagement.recommend';
const TOOLS = 'enablement.tools';

interface Cycle {
  id: string;
  nps: number[];
  tools: number[];
}
let first: Cycle; // 8 responses, closed
let small: Cycle; // 3 responses (under the threshold of 5), closed; its tools question on another scale
let current: Cycle; // 7 responses, still active

/** Launches a survey of `questions`, submits `count` responses (nps and tools from the seed), optionally closes. */
async function cycle(
  title: string,
  questions: QuestionInput[],
  count: number,
  seed: number,
  toolsMax: number,
  close: boolean,
): Promise<Cycle> {
  const survey = await live.surveys.create({ title, questions });
  await live.surveys.launch(survey.id);
  const next = random(seed);
  const npsId = survey.questions.find((q) => q.key === KEY)!.id;
  const toolsId = survey.questions.find((q) => q.key === TOOLS)!.id;
  const nps: number[] = [];
  const tools: number[] = [];
  for (let i = 0; i < count; i++) {
    nps.push(Math.floor(next() * 11));
    tools.push(1 + Math.floor(next() * toolsMax));
    await live.responses.submit(survey.id, {
      respondentExternalId: `${title}-${i}`,
      answers: [
        { questionId: npsId, value: nps[i]! },
        { questionId: toolsId, value: tools[i]! },
      ],
    });
  }
  if (close) await live.surveys.close(survey.id);
  return { id: survey.id, nps, tools };
}

const npsOf = (values: number[]) =>
  Math.round((1000 * (values.filter((v) => v >= 9).length - values.filter((v) => v <= 6).length)) / values.length) / 10;
const meanOf = (values: number[]) => Math.round((100 * values.reduce((a, b) => a + b, 0)) / values.length) / 100;
const shareOf = (values: number[], favourable: (v: number) => boolean) =>
  Math.round((1000 * values.filter(favourable).length) / values.length) / 10;

beforeAll(async () => {
  t = await startTestService();
  const tenant = await tenantWithRaisedLimits(t);
  organizationId = tenant.organizationId;
  live = tenant.live;
  first = await cycle(
    'Q1 pulse',
    [
      { type: 'nps', key: KEY, text: 'Recommend us?' },
      { type: 'rating', key: TOOLS, text: 'Tools?' },
    ],
    8,
    1,
    5,
    true,
  );
  // Keyed questions in another order, with other ids, and the tools question on a 1–7 scale.
  small = await cycle(
    'Offsite check-in',
    [
      { type: 'text', text: 'Anything?', required: false },
      { type: 'rating', key: TOOLS, text: 'Tools?', max: 7 },
      { id: 'enps', type: 'nps', key: KEY, text: 'Recommend us as an employer?' },
    ],
    3,
    2,
    7,
    true,
  );
  current = await cycle(
    'Q2 pulse',
    [
      { type: 'rating', key: TOOLS, text: 'Tools?' },
      { type: 'nps', key: KEY, text: 'Recommend us?' },
    ],
    7,
    3,
    5,
    false,
  );
  // Not in any trend: a draft with the key, and the same key in the other environment.
  await live.surveys.create({ title: 'Draft', questions: [{ type: 'nps', key: KEY, text: 'Recommend?' }] });
  const test = t.client((await t.createKey(organizationId, { environment: 'TEST' })).key);
  const elsewhere = await test.surveys.create({ title: 'Test', questions: [{ type: 'nps', key: KEY, text: 'R?' }] });
  await test.surveys.launch(elsewhere.id);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function refusal(promise: Promise<unknown>): Promise<SurveyServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SurveyServiceError);
  return error as SurveyServiceError;
}

describe('question trends', () => {
  it('lists every launched survey of the key, oldest first, with exact figures; a small one without them', async () => {
    const points = await live.analytics.trends({ questionKey: KEY });
    expect(points.map((p) => p.surveyId)).toEqual([first.id, small.id, current.id]);
    expect(points.map((p) => [p.status, p.closedAt === null])).toEqual([
      ['closed', false],
      ['closed', false],
      ['active', true],
    ]);
    expect(points[0]).toMatchObject({
      title: 'Q1 pulse',
      questionType: 'nps',
      metric: 'nps',
      suppressed: false,
      responseCount: 8,
      answeredCount: 8,
      score: npsOf(first.nps),
      favourableShare: shareOf(first.nps, (v) => v >= 9),
    });
    expect(points[1]).toEqual({
      surveyId: small.id,
      title: 'Offsite check-in',
      status: 'closed',
      launchedAt: expect.any(String),
      closedAt: expect.any(String),
      questionId: 'enps',
      questionType: 'nps',
      metric: 'nps',
      suppressed: true,
      responseCount: null,
      answeredCount: null,
      score: null,
      favourableShare: null,
    });
    expect(points[2]).toMatchObject({ questionId: 'q_2', suppressed: false, responseCount: 7 });
    expect(points[2]!.score).toBe(npsOf(current.nps));
    expect(Date.parse(points[0]!.launchedAt)).toBeLessThanOrEqual(Date.parse(points[1]!.launchedAt));

    const tools = await live.analytics.trends({ questionKey: TOOLS });
    expect(tools.map((p) => [p.metric, p.score, p.favourableShare])).toEqual([
      ['mean', meanOf(first.tools), shareOf(first.tools, (v) => v >= 4)],
      ['mean', null, null],
      ['mean', meanOf(current.tools), shareOf(current.tools, (v) => v >= 4)],
    ]);

    expect(await live.analytics.trends({ questionKey: 'nobody.asked' })).toEqual([]);
  });

  it('agrees with static analytics of the same survey', async () => {
    const points = await live.analytics.trends({ questionKey: KEY });
    for (const point of points) {
      const report = await live.analytics.static(point.surveyId);
      expect(report.suppressed).toBe(point.suppressed);
      if (report.suppressed) continue;
      expect(point.responseCount).toBe(report.responseCount);
      const stats = report.questions.find((q) => q.questionId === point.questionId)!;
      expect(stats.type).toBe('nps');
      if (stats.type !== 'nps') continue;
      expect(point.answeredCount).toBe(stats.answeredCount);
      expect(point.score).toBe(stats.score);
      expect(point.favourableShare).toBe(Math.round((1000 * stats.promoters) / stats.answeredCount) / 10);
    }
    for (const point of await live.analytics.trends({ questionKey: TOOLS })) {
      const report = await live.analytics.static(point.surveyId);
      if (report.suppressed) continue;
      const stats = report.questions.find((q) => q.questionId === point.questionId)!;
      expect(stats.type === 'rating' && stats.average).toBe(point.score);
    }
  });

  it('counts respondents as static analytics do where one may answer several times', async () => {
    const survey = await live.surveys.create({
      title: 'Repeatable',
      questions: [{ type: 'rating', key: 'repeat.mood', text: 'Mood today?' }],
      settings: { allowMultipleResponses: true },
    });
    await live.surveys.launch(survey.id);
    const submit = (who: string, value: number) =>
      live.responses.submit(survey.id, { respondentExternalId: who, answers: [{ questionId: 'q_1', value }] });
    // Six responses from two people: under the threshold of 5 respondents, whatever the responses.
    for (const [who, value] of [
      ['A', 5],
      ['A', 4],
      ['A', 3],
      ['B', 2],
      ['B', 5],
      ['B', 4],
    ] as const)
      await submit(who, value);
    const [hidden] = await live.analytics.trends({ questionKey: 'repeat.mood' });
    expect(hidden).toMatchObject({ surveyId: survey.id, suppressed: true, responseCount: null });
    expect((await live.analytics.static(survey.id)).suppressed).toBe(true);
    for (const who of ['C', 'D', 'E']) await submit(who, 1);
    const [shown] = await live.analytics.trends({ questionKey: 'repeat.mood' });
    const report = await live.analytics.static(survey.id);
    const stats = report.questions[0]!;
    expect(report.suppressed).toBe(false);
    expect(shown).toMatchObject({
      suppressed: false,
      responseCount: 9,
      answeredCount: 9,
      score: meanOf([5, 4, 3, 2, 5, 4, 1, 1, 1]),
    });
    expect(stats.type === 'rating' && [report.responseCount, stats.average]).toEqual([
      shown!.responseCount,
      shown!.score,
    ]);
    expect(shown!.favourableShare).toBe(shareOf([5, 4, 3, 2, 5, 4, 1, 1, 1], (v) => v >= 4));
  });

  it('narrows by launch day, both days included, and pages', async () => {
    // The first cycle launched in January: moved there directly, as a survey launched then would be.
    await t.db
      .updateTable('surveys')
      .set({ first_launched_at: new Date('2026-01-15T23:30:00Z') })
      .where('id', '=', first.id)
      .execute();
    const ids = async (query: { from?: string; to?: string }) =>
      (await live.analytics.trends({ questionKey: KEY, ...query })).map((p) => p.surveyId);
    expect(await ids({ to: '2026-01-15' })).toEqual([first.id]);
    expect(await ids({ from: '2026-01-15', to: '2026-01-15' })).toEqual([first.id]);
    expect(await ids({ to: '2026-01-14' })).toEqual([]);
    expect(await ids({ from: '2026-01-16' })).toEqual([small.id, current.id]);
    expect(await ids({ from: '2026-01-01' })).toEqual([first.id, small.id, current.id]);

    const page = await live.GET('/api/v1/analytics/trends', {
      params: { query: { questionKey: KEY, pageSize: 2, page: 2 } },
    });
    expect(page.data?.data.map((p) => p.surveyId)).toEqual([current.id]);
    expect(page.data?.pagination).toEqual({ page: 2, pageSize: 2, totalItems: 3, totalPages: 2, hasMore: false });
    const past = await live.GET('/api/v1/analytics/trends', {
      params: { query: { questionKey: KEY, pageSize: 2, page: 5 } },
    });
    expect(past.data?.data).toEqual([]);
    expect(past.data?.pagination.totalItems).toBe(3);
    const all: string[] = [];
    for await (const point of live.analytics.trendsAll({ questionKey: KEY, pageSize: 1 })) all.push(point.surveyId);
    expect(all).toEqual([first.id, small.id, current.id]);
  });

  it('refuses bad input with 400s naming the parameter', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, '/query/questionKey'],
      [{ questionKey: 'Engagement' }, '/query/questionKey'],
      [{ questionKey: KEY, from: '2026-03-01', to: '2026-02-28' }, '/query/to'],
      [{ questionKey: KEY, from: '2026-02-30' }, '/query/from'],
      [{ questionKey: KEY, to: '2025-02-29' }, '/query/to'],
      [{ questionKey: KEY, from: '2026-13-01' }, '/query/from'],
      [{ questionKey: KEY, from: 'yesterday' }, '/query/from'],
      [{ questionKey: KEY, to: '2026-01-01T00:00:00Z' }, '/query/to'],
    ];
    for (const [query, path] of cases) {
      const error = await refusal(live.analytics.trends(query as never));
      expect([error.status, error.code], JSON.stringify(query)).toEqual([400, 'validation_failed']);
      expect(
        error.details.map((d) => d.path),
        JSON.stringify(query),
      ).toContain(path);
    }
    // A leap day is a day; the ends of the calendar are days too.
    expect(await live.analytics.trends({ questionKey: KEY, from: '2024-02-29' })).toHaveLength(3);
    expect(await live.analytics.trends({ questionKey: KEY, from: '0001-01-01', to: '9999-12-31' })).toHaveLength(3);
    expect(await live.analytics.trends({ questionKey: KEY, from: '9999-12-31' })).toEqual([]);
  });
});

describe('smart analytics compareTo=previousCycle', () => {
  it('compares each keyed question with the most recent earlier survey of its key', async () => {
    // Under the threshold of 5 the previous cycle (3 respondents) shows no figures.
    const hidden = await live.analytics.smart(current.id, { compareTo: 'previousCycle' });
    expect(hidden.comparison).toEqual({
      basis: 'previous_cycle',
      distributionId: null,
      surveyId: small.id,
      submittedAfter: null,
      submittedBefore: null,
      suppressed: true,
      responseCount: null,
      questions: [],
    });
    // The default compares with a distribution or period, which this request has not.
    expect((await live.analytics.smart(current.id)).comparison).toBeNull();

    await live.analytics.settings.update({ anonymityThreshold: 3 });
    try {
      const shown = await live.analytics.smart(current.id, { compareTo: 'previousCycle' });
      expect(shown.comparison).toEqual({
        basis: 'previous_cycle',
        distributionId: null,
        surveyId: small.id,
        submittedAfter: null,
        submittedBefore: null,
        suppressed: false,
        responseCount: 3,
        questions: [
          // The previous cycle rated tools on 1–7: a mean on another scale does not compare.
          {
            questionId: 'q_1',
            key: TOOLS,
            previousQuestionId: null,
            metric: 'mean',
            current: meanOf(current.tools),
            previous: null,
            change: null,
          },
          {
            questionId: 'q_2',
            key: KEY,
            previousQuestionId: 'enps',
            metric: 'nps',
            current: npsOf(current.nps),
            previous: npsOf(small.nps),
            change: expect.any(Number),
          },
        ],
      });
      const nps = shown.comparison!.questions[1]!;
      expect(Math.abs(nps.change! - (npsOf(current.nps) - npsOf(small.nps)))).toBeLessThanOrEqual(0.1);

      // The earliest cycle has none before it; the middle one's is the first.
      expect((await live.analytics.smart(first.id, { compareTo: 'previousCycle' })).comparison).toBeNull();
      const middle = await live.analytics.smart(small.id, { compareTo: 'previousCycle' });
      expect(middle.comparison).toMatchObject({ surveyId: first.id, suppressed: false, responseCount: 8 });
      expect(middle.comparison!.questions.map((q) => [q.questionId, q.previousQuestionId, q.previous])).toEqual([
        ['q_2', null, null],
        ['enps', 'q_1', npsOf(first.nps)],
      ]);
    } finally {
      await live.analytics.settings.update({ anonymityThreshold: 5 });
    }
  });

  it('refuses an unknown compareTo', async () => {
    const error = await refusal(live.analytics.smart(current.id, { compareTo: 'lastYear' as never }));
    expect(error.status).toBe(400);
    expect(error.details.map((d) => d.path)).toContain('/query/compareTo');
  });
});
