/**
 * The OpenAI-compatible provider against a fake server on 127.0.0.1: structured output, the one repair, invalid
 * output (502, nothing stored), 429 with Retry-After and 500s (503), a hang (504); in analyses, retries with
 * back-off inside the job ending in a completed or a failed analysis with its code; invented quotes dropped; and
 * the redaction, checked on what the fake server received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { commentsOf, goodAnalysis, goodSurvey, startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import {
  aiTenant,
  finished,
  flexibilityComments,
  launchedSurvey,
  meetingComments,
  startAnalysis,
  submitComments,
} from './fixtures.js';

const API_KEY = 'sk-fake-0123456789abcdef-never-logged';
const TIMEOUT_MS = 1500;

let t: TestService;
let fake: FakeOpenAi;
let tenant: Awaited<ReturnType<typeof aiTenant>>;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await startTestService({
    ai: {
      ...loadConfig([]).ai,
      provider: 'openai-compatible',
      baseUrl: fake.url,
      apiKey: API_KEY,
      model: 'fake-model-1',
      timeoutMs: TIMEOUT_MS,
      maxAttempts: 3,
      retryBaseMs: 50,
    },
  });
  tenant = await aiTenant(t);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const prompt =
  'Quarterly engagement pulse for the support team; contact jane.doe@example.com or +44 20 7946 0958, see https://intranet.example.com/pulse';

async function surveyCount(): Promise<number> {
  const row = await t.db
    .selectFrom('surveys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', tenant.organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('generateSurvey (openai-compatible)', () => {
  it('asks for JSON-schema structured output, redacts the prompt, stores the draft and names provider and model', async () => {
    fake.behave(() => ({ kind: 'content', content: goodSurvey(4) }));
    const { data, error, response } = await tenant.live.POST('/api/v1/surveys/generate', {
      body: { prompt, questionCount: 4 },
    });
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(response.status).toBe(201);
    expect(response.headers.get('AI-Provider')).toBe('openai-compatible');
    expect(response.headers.get('AI-Model')).toBe('fake-model-1');
    expect(data!.data).toMatchObject({ status: 'draft', title: 'Engagement pulse' });
    expect(data!.data.questions.map((q) => q.type)).toEqual(['nps', 'rating', 'rating', 'text']);
    expect(fake.received).toHaveLength(1);
    const sent = fake.received[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body.model).toBe('fake-model-1');
    expect(sent.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'survey' } });
    expect(sent.raw).not.toMatch(/jane\.doe|example\.com|7946/);
    expect(sent.raw).toContain('[email]');
    expect(sent.raw).toContain('[phone]');
    expect(sent.raw).toContain('[url]');
  });

  it('repairs invalid output once: invalid JSON, then a valid survey', async () => {
    fake.behave((_, i) => ({ kind: 'content', content: i === 0 ? '{"title": "oops", ' : goodSurvey(3) }));
    const survey = await tenant.live.unwrap(
      tenant.live.POST('/api/v1/surveys/generate', { body: { prompt, questionCount: 3 } }),
    );
    expect(survey.questions).toHaveLength(3);
    expect(fake.received).toHaveLength(2);
    const repair = fake.received[1]!.body.messages;
    expect(repair.at(-2)).toMatchObject({ role: 'assistant', content: '{"title": "oops", ' });
    expect(repair.at(-1)!.content).toMatch(/invalid: the answer is not valid JSON/);
  });

  it('answers 502 ai_output_invalid when the output breaks the survey schema after the repair, and stores nothing', async () => {
    const before = await surveyCount();
    // Valid JSON for the provider's shape, but a rating scale the contract refuses (max 20), twice.
    const broken = JSON.parse(goodSurvey(3)) as { questions: Array<Record<string, unknown>> };
    broken.questions[1]!.max = 20;
    fake.behave(() => ({ kind: 'content', content: JSON.stringify(broken) }));
    const { error, response } = await tenant.live.POST('/api/v1/surveys/generate', {
      body: { prompt, questionCount: 3 },
    });
    expect(response.status).toBe(502);
    expect(error!.error.code).toBe('ai_output_invalid');
    expect(error!.error.message).toMatch(/\/questions\/1\/max/);
    expect(fake.received).toHaveLength(2);
    expect(fake.received[1]!.body.messages.at(-1)!.content).toMatch(/questions\/1\/max/);
    // More questions than asked for is invalid too.
    fake.behave(() => ({ kind: 'content', content: goodSurvey(5) }));
    const tooMany = await tenant.live.POST('/api/v1/surveys/generate', { body: { prompt, questionCount: 3 } });
    expect(tooMany.response.status).toBe(502);
    expect(await surveyCount()).toBe(before);
  });

  it('answers 503 ai_provider_unavailable on 429 (passing Retry-After on) and on 500, 504 ai_provider_timeout on a hang', async () => {
    fake.behave(() => ({ kind: 'status', status: 429, headers: { 'retry-after': '7' } }));
    const limited = await tenant.live.POST('/api/v1/surveys/generate', { body: { prompt } });
    expect(limited.response.status).toBe(503);
    expect(limited.error!.error.code).toBe('ai_provider_unavailable');
    expect(limited.response.headers.get('retry-after')).toBe('7');

    fake.behave(() => ({ kind: 'status', status: 500 }));
    const failing = await tenant.live.POST('/api/v1/surveys/generate', { body: { prompt } });
    expect(failing.response.status).toBe(503);
    expect(failing.error!.error.code).toBe('ai_provider_unavailable');

    fake.behave(() => ({ kind: 'hang' }));
    const started = Date.now();
    const slow = await tenant.live.POST('/api/v1/surveys/generate', { body: { prompt } });
    expect(slow.response.status).toBe(504);
    expect(slow.error!.error.code).toBe('ai_provider_timeout');
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);

    // The time limit covers the whole generation: an invalid answer, then a repair that hangs.
    fake.behave((_, i) => (i === 0 ? { kind: 'content', content: 'not json' } : { kind: 'hang' }));
    const repairStarted = Date.now();
    const slowRepair = await tenant.live.POST('/api/v1/surveys/generate', { body: { prompt } });
    expect(slowRepair.response.status).toBe(504);
    expect(fake.received).toHaveLength(2);
    expect(Date.now() - repairStarted).toBeLessThan(TIMEOUT_MS + 2000);
  });
});

/** One question of the provider's flat shape, every field present as a strict model gives it. */
const flat = (q: Record<string, unknown>) => ({
  required: true,
  min: null,
  max: null,
  minLabel: null,
  maxLabel: null,
  choices: [],
  rows: [],
  minDate: null,
  maxDate: null,
  integer: false,
  allowOther: false,
  allowNotApplicable: false,
  key: null,
  displayIf: null,
  ...q,
});
const proposal = (questions: Record<string, unknown>[]) =>
  JSON.stringify({ title: 'Engagement pulse', description: 'How work feels.', questions: questions.map(flat) });

describe('generateSurvey (openai-compatible) with the newer question types', () => {
  it('takes a Likert grid, ranking, number, date, Other, N/A, display logic and keys as proposed', async () => {
    fake.behave(() => ({
      kind: 'content',
      content: proposal([
        { type: 'nps', text: 'How likely are you to recommend working here?', key: 'engagement.recommend' },
        {
          type: 'matrix',
          text: 'How much do you agree?',
          rows: ['I know what is expected of me.', 'I have the tools I need.'],
          min: 1,
          max: 5,
          minLabel: 'Strongly disagree',
          maxLabel: 'Strongly agree',
          allowNotApplicable: true,
          key: 'engagement.agreement',
        },
        { type: 'single_choice', text: 'Where do you work?', choices: ['Office', 'Home'], allowOther: true },
        { type: 'ranking', text: 'Rank these benefits', choices: ['Pay', 'Time off', 'Growth'] },
        { type: 'number', text: 'Years at the company', min: 0, max: 60, integer: true, required: false },
        { type: 'date', text: 'Your start date', minDate: '2000-01-01', required: false },
        {
          type: 'text',
          text: 'What would make you more likely to recommend us?',
          required: false,
          displayIf: { combine: 'all', rules: [{ question: 1, op: 'lte', value: 6 }] },
        },
        {
          type: 'text',
          text: 'What would make home working better?',
          required: false,
          displayIf: { combine: 'any', rules: [{ question: 3, op: 'equals', value: 'home' }] },
        },
      ]),
    }));
    const { data, error, response } = await tenant.live.POST('/api/v1/surveys/generate', {
      body: { prompt: 'Engagement pulse with a Likert grid and a follow-up for detractors', questionCount: 8 },
    });
    expect(response.status, JSON.stringify(error)).toBe(201);
    expect(data!.adjustments).toEqual([]);
    expect(fake.received).toHaveLength(1);
    // What the model was offered: the newer types and fields, in the schema and in the instructions.
    const sent = fake.received[0]!.body;
    expect(JSON.stringify(sent.response_format)).toMatch(/"matrix".*"ranking".*"number".*"date"/);
    expect(JSON.stringify(sent.response_format)).toMatch(/displayIf.*notAnswered/);
    expect(sent.messages[0]!.content).toMatch(/Likert grid/);
    const survey = data!.data;
    expect(survey.questions.map((q) => [q.id, q.type, q.key ?? null])).toEqual([
      ['q_1', 'nps', 'engagement.recommend'],
      ['q_2', 'matrix', 'engagement.agreement'],
      ['q_3', 'single_choice', null],
      ['q_4', 'ranking', null],
      ['q_5', 'number', null],
      ['q_6', 'date', null],
      ['q_7', 'text', null],
      ['q_8', 'text', null],
    ]);
    expect(survey.questions[1]).toMatchObject({
      rows: [
        { id: 'r_1', text: 'I know what is expected of me.' },
        { id: 'r_2', text: 'I have the tools I need.' },
      ],
      scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
      columns: null,
      allowNotApplicable: true,
    });
    expect(survey.questions[2]).toMatchObject({ allowOther: true });
    expect(survey.questions[4]).toMatchObject({ min: 0, max: 60, integer: true });
    expect(survey.questions[5]).toMatchObject({ min: '2000-01-01', max: null });
    expect(survey.questions[6]!.displayIf).toEqual({ all: [{ questionId: 'q_1', op: 'lte', value: 6 }] });
    // A choice named by its label is a rule on its id.
    expect(survey.questions[7]!.displayIf).toEqual({ any: [{ questionId: 'q_3', op: 'equals', value: 'c_2' }] });
  });

  it('takes a grid with labelled columns from its choices, and drops a scale proposed beside them', async () => {
    fake.behave(() => ({
      kind: 'content',
      content: proposal([
        {
          type: 'matrix',
          text: 'Did you get what you needed?',
          rows: ['Training', 'Equipment', 'Onboarding'],
          choices: ['Yes', 'Partly', 'No'],
          allowNotApplicable: true,
        },
        {
          type: 'matrix',
          text: 'Which applies?',
          rows: ['My team', 'My manager'],
          choices: ['Often', 'Rarely'],
          min: 1,
          max: 5,
        },
      ]),
    }));
    const { data, error, response } = await tenant.live.POST('/api/v1/surveys/generate', {
      body: { prompt: 'Onboarding check with a grid of yes, partly or no', questionCount: 2 },
    });
    expect(response.status, JSON.stringify(error)).toBe(201);
    expect(fake.received.at(-1)!.body.messages[0]!.content).toMatch(/labelled answers.*as choices/);
    const [first, second] = data!.data.questions;
    expect(first).toMatchObject({
      type: 'matrix',
      rows: [
        { id: 'r_1', text: 'Training' },
        { id: 'r_2', text: 'Equipment' },
        { id: 'r_3', text: 'Onboarding' },
      ],
      scale: null,
      columns: [
        { id: 'c_1', label: 'Yes' },
        { id: 'c_2', label: 'Partly' },
        { id: 'c_3', label: 'No' },
      ],
      allowNotApplicable: true,
    });
    expect(second).toMatchObject({ type: 'matrix', scale: null, columns: [{ label: 'Often' }, { label: 'Rarely' }] });
    expect([...data!.adjustments!].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: '/questions/1/max', action: 'dropped', reason: expect.stringMatching(/labelled columns/) as string },
      { path: '/questions/1/min', action: 'dropped', reason: expect.stringMatching(/labelled columns/) as string },
    ]);
  });

  it('drops a broken grid and rules on later or dropped questions, repairs a key, and says so; the draft launches', async () => {
    const before = await surveyCount();
    fake.behave(() => ({
      kind: 'content',
      content: proposal([
        { type: 'nps', text: 'How likely are you to recommend working here?', key: 'Engagement Recommend' },
        { type: 'matrix', text: 'How much do you agree?', rows: ['Only one statement'], min: 1, max: 5 },
        {
          type: 'rating',
          text: 'I have the tools I need.',
          displayIf: {
            combine: 'all',
            rules: [
              { question: 4, op: 'answered', value: null },
              { question: 1, op: 'gte', value: 7 },
            ],
          },
        },
        {
          type: 'text',
          text: 'Anything else?',
          required: false,
          displayIf: { combine: 'any', rules: [{ question: 2, op: 'answered', value: null }] },
        },
        { type: 'rating', text: 'My manager supports me.', allowOther: true },
      ]),
    }));
    const { data, error, response } = await tenant.live.POST('/api/v1/surveys/generate', {
      body: { prompt: 'Engagement pulse with a Likert grid and a follow-up for detractors', questionCount: 5 },
    });
    expect(response.status, JSON.stringify(error)).toBe(201);
    // Fixed here, without asking the model again.
    expect(fake.received).toHaveLength(1);
    const adjustments = data!.adjustments!;
    expect([...adjustments].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      {
        path: '/questions/0/key',
        action: 'repaired',
        reason: expect.stringMatching(/pattern.*written engagement-recommend$/) as string,
      },
      { path: '/questions/1', action: 'dropped', reason: expect.stringMatching(/fewer than 2 items/) as string },
      {
        path: '/questions/2/displayIf/all/0',
        action: 'dropped',
        reason: expect.stringMatching(/earlier question; q_4 is a later one/) as string,
      },
      {
        path: '/questions/3/displayIf/any/0',
        action: 'dropped',
        reason: expect.stringMatching(/q_2 was dropped/) as string,
      },
      {
        path: '/questions/4/allowOther',
        action: 'dropped',
        reason: expect.stringMatching(/single_choice, multiple_choice questions, not rating/) as string,
      },
    ]);
    const survey = data!.data;
    expect(survey.questions.map((q) => [q.id, q.type, q.key ?? null, q.displayIf ?? null])).toEqual([
      ['q_1', 'nps', 'engagement-recommend', null],
      ['q_2', 'rating', null, { all: [{ questionId: 'q_1', op: 'gte', value: 7 }] }],
      ['q_3', 'text', null, null],
      ['q_4', 'rating', null, null],
    ]);
    expect(survey.questions[3]).not.toHaveProperty('allowOther');
    expect(await surveyCount()).toBe(before + 1);
    const launched = await tenant.live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } });
    expect(launched.response.status).toBe(200);
  });
});

describe('AI analysis (openai-compatible)', () => {
  it('sends only redacted, unidentified text; keeps verbatim quotes and drops invented ones', async () => {
    const client = tenant.live;
    await client.unwrap(
      client.PUT('/api/v1/respondents/{externalId}', {
        params: { path: { externalId: 'EMP-777' } },
        body: { email: 'priya.r@corp.example', firstName: 'Priya', lastName: 'Raghunathan' },
      }),
    );
    const survey = await launchedSurvey(client);
    const sensitive = [
      'Too many meetings, ask Priya Raghunathan, she agrees. Mail me at sam.tester@corp.example',
      'Meetings all day; call me on 555-123-4567 or see www.meetings-are-bad.com/rant',
    ];
    const ids = await submitComments(client, survey.id, [...meetingComments, ...sensitive, ...flexibilityComments]);
    fake.behave((request) => ({
      kind: 'content',
      content: goodAnalysis(request, [
        { name: 'meetings', word: /meeting/i, extraQuotes: ['Meetings are the worst thing ever invented'] },
        { name: 'flexibility', word: /flexib|home|remote|hybrid/i },
      ]),
    }));
    const analysis = await finished(client, survey.id, (await startAnalysis(client, survey.id)).id);
    expect(analysis.status, JSON.stringify(analysis)).toBe('completed');
    expect(analysis).toMatchObject({
      provider: 'openai-compatible',
      model: 'fake-model-1',
      commentCount: 14,
      language: 'en',
      summary: 'People talk about meetings and flexibility.',
    });

    expect(fake.received).toHaveLength(1);
    const raw = fake.received[0]!.raw;
    for (const secret of [
      'Priya',
      'Raghunathan',
      'sam.tester',
      'corp.example',
      '555-123-4567',
      'meetings-are-bad',
      'EMP-777',
      'rsp_',
      ...ids,
    ])
      expect(raw).not.toContain(secret);
    expect(raw).toContain('ask [name] [name], she agrees. Mail me at [email]');
    expect(raw).toContain('call me on [phone] or see [url]');
    expect(commentsOf(fake.received[0]!)).toHaveLength(14);

    const meetings = analysis.themes.find((th) => th.name === 'meetings')!;
    expect(meetings.mentions).toBe(8);
    expect(meetings.responseIds).toEqual(expect.arrayContaining(ids.slice(0, 8)));
    expect(meetings.sampleQuotes.length).toBeGreaterThan(0);
    expect(meetings.sampleQuotes).not.toContain('Meetings are the worst thing ever invented');
    const texts = [...meetingComments, ...sensitive, ...flexibilityComments];
    for (const quote of analysis.themes.flatMap((th) => th.sampleQuotes))
      expect(texts.some((c) => c.includes(quote))).toBe(true);
    expect(analysis.actions.find((a) => a.theme === 'meetings')).toMatchObject({
      text: 'Act on meetings.',
      basis: 'theme',
      priority: 'high',
    });
  });

  it('retries a 429 after its Retry-After and a malformed answer, inside the job, then completes', async () => {
    const client = tenant.live;
    const survey = await launchedSurvey(client);
    await submitComments(client, survey.id, meetingComments);
    fake.behave((request, i) =>
      i === 0
        ? { kind: 'status', status: 429, headers: { 'retry-after': '1' } }
        : i === 1
          ? { kind: 'content', content: 'not json' }
          : { kind: 'content', content: goodAnalysis(request, [{ name: 'meetings', word: /meeting/i }]) },
    );
    const analysis = await finished(client, survey.id, (await startAnalysis(client, survey.id)).id);
    expect(analysis.status).toBe('completed');
    expect(analysis.themes.map((th) => th.name)).toEqual(['meetings']);
    // 429, then the malformed answer and its repair within one attempt.
    expect(fake.received).toHaveLength(3);
    expect(fake.received[1]!.at - fake.received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('ends in a failed analysis with a code when the provider keeps failing (500s, invalid output, a hang)', async () => {
    const client = tenant.live;
    const survey = await launchedSurvey(client);
    await submitComments(client, survey.id, meetingComments);
    const cases = [
      { reply: { kind: 'status', status: 500 } as const, code: 'ai_provider_unavailable', requests: 3 },
      { reply: { kind: 'content', content: '{"language": 1}' } as const, code: 'ai_output_invalid', requests: 6 },
      { reply: { kind: 'hang' } as const, code: 'ai_provider_timeout', requests: 3 },
    ];
    for (const { reply, code, requests } of cases) {
      fake.behave(() => reply);
      const analysis = await finished(client, survey.id, (await startAnalysis(client, survey.id)).id);
      expect(analysis).toMatchObject({ status: 'failed', errorCode: code, themes: [], summary: null });
      expect(analysis.error).toMatch(/after 3 attempts/);
      expect(fake.received).toHaveLength(requests);
      const events = await t.db
        .selectFrom('events')
        .select('data')
        .where('organization_id', '=', tenant.organizationId)
        .where('type', '=', 'analytics.ai.completed')
        .execute();
      expect(events.filter((e) => (e.data as { id: string }).id === analysis.id)).toHaveLength(1);
    }
  });
});
