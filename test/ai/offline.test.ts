/**
 * The offline provider end to end through the SDK: survey generation (validated like createSurvey, stored as a
 * draft, deterministic, provider and model named), and an analysis (202, the job, themes with response ids and
 * verbatim quotes, sentiment, recommendations tied to themes and questions, the event), the anonymity rule, and
 * the refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  aiTenant,
  finished,
  flexibilityComments,
  launchedSurvey,
  meetingComments,
  payComments,
  startAnalysis,
  submitComments,
} from './fixtures.js';

let t: TestService;
let tenant: Awaited<ReturnType<typeof aiTenant>>;
beforeAll(async () => {
  t = await startTestService();
  tenant = await aiTenant(t);
});
afterAll(async () => {
  await t?.close();
});

describe('generateSurvey (offline)', () => {
  it('creates a valid draft from the prompt, with the count it states, eNPS first and open text last', async () => {
    const client = tenant.live;
    const prompt = 'Quarterly engagement pulse for a remote engineering team, 10 questions, include eNPS';
    const { data, error, response } = await client.POST('/api/v1/surveys/generate', { body: { prompt } });
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(response.status).toBe(201);
    expect(response.headers.get('AI-Provider')).toBe('offline');
    expect(response.headers.get('AI-Model')).toBe('offline-question-bank@1');
    // The question bank drafts valid surveys: nothing to drop or repair.
    expect(data!.adjustments).toEqual([]);
    const survey = data!.data;
    expect(survey.status).toBe('draft');
    expect(survey.questions).toHaveLength(10);
    expect(survey.questions[0]!.type).toBe('nps');
    expect(survey.questions[0]!.text).toMatch(/place to work/);
    expect(survey.questions.at(-1)!.type).toBe('text');
    // Remote-work questions come from the "remote" topic of the prompt.
    expect(survey.questions.some((q) => /remot/i.test(q.text))).toBe(true);
    const order = ['nps', 'rating', 'matrix', 'single_choice', 'multiple_choice', 'ranking', 'number', 'date', 'text'];
    const ranks = survey.questions.map((q) => order.indexOf(q.type));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    // Stored like any survey, and launchable.
    const read = await client.unwrap(client.GET('/api/v1/surveys/{id}', { params: { path: { id: survey.id } } }));
    expect(read.questions).toEqual(survey.questions);
    const launched = await client.unwrap(
      client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }),
    );
    expect(launched.status).toBe('active');
    // Deterministic.
    const again = await client.unwrap(client.POST('/api/v1/surveys/generate', { body: { prompt } }));
    expect(again.questions).toEqual(survey.questions);
    expect(again.id).not.toBe(survey.id);
  });

  it('stores drafts with keys, a Likert grid when asked, and follow-up logic, as surveys that launch', async () => {
    const client = tenant.live;
    const grid = await client.unwrap(
      client.POST('/api/v1/surveys/generate', {
        body: { prompt: 'Quarterly engagement survey for employees as a Likert grid', questionCount: 8 },
      }),
    );
    expect(grid.questions).toHaveLength(8);
    expect(grid.questions.filter((q) => q.type === 'matrix')).toHaveLength(1);
    expect(grid.questions.every((q) => typeof q.key === 'string')).toBe(true);
    const customer = await client.unwrap(
      client.POST('/api/v1/surveys/generate', { body: { prompt: 'Customer NPS after onboarding', questionCount: 8 } }),
    );
    expect(customer.questions.filter((q) => q.displayIf)).toHaveLength(1);
    for (const survey of [grid, customer])
      await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  });

  it('follows questionCount and the title, and detects the topic', async () => {
    const client = tenant.live;
    const survey = await client.unwrap(
      client.POST('/api/v1/surveys/generate', {
        body: {
          prompt: 'Onboarding experience of people hired in the last three months',
          questionCount: 3,
          title: 'New joiners',
        },
      }),
    );
    expect(survey.title).toBe('New joiners');
    expect(survey.questions).toHaveLength(3);
    expect(survey.questions.some((q) => /first week|first day|welcome/i.test(q.text))).toBe(true);
    const exit = await client.unwrap(
      client.POST('/api/v1/surveys/generate', {
        body: { prompt: 'Exit interview for people leaving the company', questionCount: 5 },
      }),
    );
    expect(exit.title).toBe('Exit survey');
    expect(exit.questions.some((q) => q.type === 'single_choice' && /reason you are leaving/.test(q.text))).toBe(true);
    const customer = await client.unwrap(
      client.POST('/api/v1/surveys/generate', { body: { prompt: 'NPS survey for our customers after a purchase' } }),
    );
    expect(customer.questions[0]).toMatchObject({
      type: 'nps',
      text: 'How likely are you to recommend us to a friend or colleague?',
    });
    // Eight questions, every one for a customer: none filled up from the employee surveys.
    expect(customer.questions).toHaveLength(8);
    expect(customer.questions.filter((q) => /work|company|manager|team/i.test(q.text))).toEqual([]);
  });

  it('replays an idempotent generation with its provider headers, without generating twice', async () => {
    const client = tenant.live;
    const body = { prompt: 'Wellbeing check-in for the support team', questionCount: 4 };
    const options = { body, params: { header: { 'Idempotency-Key': 'gen-once-1' } } };
    const first = await client.POST('/api/v1/surveys/generate', options);
    const second = await client.POST('/api/v1/surveys/generate', options);
    expect(second.response.status).toBe(201);
    expect(second.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.response.headers.get('AI-Provider')).toBe('offline');
    expect(second.response.headers.get('AI-Model')).toBe('offline-question-bank@1');
    expect(second.data!.data).toEqual(first.data!.data);
  });

  it('refuses a prompt the contract refuses', async () => {
    const { error, response } = await tenant.live.POST('/api/v1/surveys/generate', {
      body: { prompt: 'short', questionCount: 31 },
    });
    expect(response.status).toBe(400);
    expect(error!.error.code).toBe('validation_failed');
  });
});

describe('AI analysis (offline)', () => {
  it('analyses the comments in a job: themes with response ids, verbatim quotes, sentiment, recommendations, the event', async () => {
    const client = tenant.live;
    const survey = await launchedSurvey(client);
    const meetingIds = await submitComments(client, survey.id, meetingComments);
    const flexIds = await submitComments(client, survey.id, flexibilityComments, 3);
    const payIds = await submitComments(client, survey.id, payComments);
    const all = [...meetingComments, ...flexibilityComments, ...payComments];

    const pending = await startAnalysis(client, survey.id, { focus: 'What stops people from doing focused work?' });
    expect(pending).toMatchObject({
      status: 'pending',
      provider: 'offline',
      surveyId: survey.id,
      themes: [],
      summary: null,
      errorCode: null,
    });
    expect(pending.id).toMatch(/^ana_/);
    const analysis = await finished(client, survey.id, pending.id);
    expect(analysis.status, JSON.stringify(analysis)).toBe('completed');
    expect(analysis.model).toMatch(/^wink-eng-lite-web-model@/);
    expect(analysis.responseCount).toBe(17);
    expect(analysis.commentCount).toBe(17);
    expect(analysis.language).toBe('en');
    expect(analysis.anonymity).toEqual({
      threshold: 5,
      suppressed: false,
      suppressedThemes: 0,
      suppressedQuestions: 0,
    });

    const byName = new Map(analysis.themes.map((th) => [th.name, th]));
    const meetings = byName.get('meetings')!;
    const flexibility = byName.get('flexibility')!;
    const pay = byName.get('pay and benefits')!;
    expect([...meetings.responseIds].sort()).toEqual([...meetingIds].sort());
    expect([...flexibility.responseIds].sort()).toEqual([...flexIds].sort());
    expect([...pay.responseIds].sort()).toEqual([...payIds].sort());
    expect(meetings.mentions).toBe(6);
    expect(meetings.share).toBeCloseTo(6 / 17, 2);
    expect(meetings.sentiment).toBeLessThan(0);
    expect(pay.sentiment).toBeLessThan(0);
    expect(flexibility.sentiment).toBeGreaterThan(0);
    for (const theme of analysis.themes) {
      expect(theme.sampleQuotes.length).toBeGreaterThan(0);
      for (const quote of theme.sampleQuotes) expect(all.some((c) => c.includes(quote))).toBe(true);
    }
    expect(analysis.sentiment!.positive + analysis.sentiment!.neutral + analysis.sentiment!.negative).toBeCloseTo(1, 2);
    expect(analysis.sentiment!.negative).toBeGreaterThan(analysis.sentiment!.positive);
    expect(analysis.responseSentiments).toHaveLength(17);
    for (const id of flexIds)
      expect(analysis.responseSentiments.find((r) => r.responseId === id)!.label).toBe('positive');

    const rating = analysis.questions.find((q) => q.questionId === 'q_1')!;
    expect(rating).toMatchObject({ type: 'rating', answerCount: 17, sentiment: null, suppressed: false });
    expect(rating.averageScore).toBeCloseTo((11 * 2 + 6 * 3) / 17, 2);
    const text = analysis.questions.find((q) => q.questionId === 'q_2')!;
    expect(text.sentiment!.score).toBeLessThan(0);

    // Recommendations: the negative themes first, the low-scoring rating question, the plain list in step.
    expect(analysis.actions.some((a) => a.basis === 'theme' && a.theme === 'meetings' && a.priority === 'high')).toBe(
      true,
    );
    expect(analysis.actions.some((a) => a.basis === 'question' && a.questionId === 'q_1')).toBe(true);
    expect(analysis.actions.find((a) => a.theme === 'flexibility')!.priority).toBe('low');
    expect(analysis.recommendations).toEqual(analysis.actions.map((a) => a.text));
    expect(analysis.summary).toMatch(/17 comments/);
    expect(analysis.summary).toMatch(/focus/);

    const latest = await client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/ai', { params: { path: { id: survey.id } } }),
    );
    expect(latest).toEqual(analysis);
    const events = await t.db
      .selectFrom('events')
      .selectAll()
      .where('organization_id', '=', tenant.organizationId)
      .where('type', '=', 'analytics.ai.completed')
      .execute();
    const mine = events.filter((e) => (e.data as { id: string }).id === analysis.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.data).toEqual(analysis);

    // Deterministic: a second analysis of the same answers finds the same.
    const second = await finished(
      client,
      survey.id,
      (await startAnalysis(client, survey.id, { focus: 'What stops people from doing focused work?' })).id,
    );
    const strip = (a: typeof analysis) => ({ ...a, id: '', createdAt: '', completedAt: '' });
    expect(strip(second)).toEqual(strip(analysis));
  });

  it('limits the analysis to questionIds and refuses unknown ones', async () => {
    const client = tenant.live;
    const survey = await launchedSurvey(client);
    await submitComments(client, survey.id, meetingComments);
    const only = await finished(
      client,
      survey.id,
      (await startAnalysis(client, survey.id, { questionIds: ['q_1'] })).id,
    );
    expect(only.questions.map((q) => q.questionId)).toEqual(['q_1']);
    expect(only.commentCount).toBe(0);
    expect(only.themes).toEqual([]);
    const { error, response } = await client.POST('/api/v1/surveys/{id}/analytics/ai/generate', {
      params: { path: { id: survey.id } },
      body: { questionIds: ['q_1', 'q_9'] },
    });
    expect(response.status).toBe(400);
    expect(error!.error.details).toEqual([expect.objectContaining({ path: '/body/questionIds/1', code: 'not_found' })]);
  });

  it('never shows the free text of a group under the anonymity threshold', async () => {
    const client = tenant.live;
    const survey = await launchedSurvey(client);
    await submitComments(client, survey.id, meetingComments.slice(0, 4));
    const small = await finished(client, survey.id, (await startAnalysis(client, survey.id)).id);
    expect(small.status).toBe('completed');
    expect(small.anonymity).toMatchObject({ threshold: 5, suppressed: true, suppressedQuestions: 1 });
    expect(small).toMatchObject({ themes: [], summary: null, responseSentiments: [] });
    expect(small.questions.find((q) => q.questionId === 'q_2')).toMatchObject({ sentiment: null, suppressed: true });
    expect(JSON.stringify(small)).not.toMatch(/meeting/i);

    // Enough responses overall, but a theme drawn from fewer than 5 is dropped (and counted).
    await submitComments(client, survey.id, [
      ...flexibilityComments,
      'The parking lot is always full.',
      'Parking is a nightmare since the move.',
    ]);
    const mixed = await finished(client, survey.id, (await startAnalysis(client, survey.id)).id);
    expect(mixed.anonymity.suppressed).toBe(false);
    expect(mixed.themes.map((th) => th.name)).toEqual(['flexibility']);
    expect(mixed.anonymity.suppressedThemes).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(mixed.themes)).not.toMatch(/parking|meeting/i);
  });

  it("applies the organization's own anonymity threshold (analytics settings)", async () => {
    const own = await aiTenant(t);
    const client = own.live;
    const { response } = await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 3 } });
    expect(response.status).toBe(200);
    const survey = await launchedSurvey(client);
    await submitComments(client, survey.id, meetingComments.slice(0, 4));
    const analysis = await finished(client, survey.id, (await startAnalysis(client, survey.id)).id);
    expect(analysis.anonymity).toEqual({
      threshold: 3,
      suppressed: false,
      suppressedThemes: 0,
      suppressedQuestions: 0,
    });
    expect(analysis.themes.map((th) => th.name)).toEqual(['meetings']);
    expect(analysis.responseSentiments).toHaveLength(4);
    // A summary still needs 5 comments.
    expect(analysis.summary).toBeNull();
  });

  it('answers 404 for unknown surveys and analyses, and for a survey never analysed', async () => {
    const client = tenant.live;
    const survey = await launchedSurvey(client);
    const never = await client.GET('/api/v1/surveys/{id}/analytics/ai', { params: { path: { id: survey.id } } });
    expect(never.response.status).toBe(404);
    const unknown = await client.POST('/api/v1/surveys/{id}/analytics/ai/generate', {
      params: { path: { id: 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8' } },
      body: {},
    });
    expect(unknown.response.status).toBe(404);
    const malformed = await client.GET('/api/v1/surveys/{id}/analytics/ai/{analysisId}', {
      params: { path: { id: survey.id, analysisId: 'nope' } },
    });
    expect(malformed.response.status).toBe(404);
    // Another environment's key does not see the analysis.
    const analysis = await startAnalysis(client, survey.id);
    const other = await tenant.test.GET('/api/v1/surveys/{id}/analytics/ai/{analysisId}', {
      params: { path: { id: survey.id, analysisId: analysis.id } },
    });
    expect(other.response.status).toBe(404);
    await finished(client, survey.id, analysis.id);
  });
});
