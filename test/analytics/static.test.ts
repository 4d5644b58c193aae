/**
 * getStaticAnalytics against an independent computation (simple-statistics over the raw generated answers):
 * every figure of every question, the daily series, segments with both suppression rules, time windows, and
 * the exactness of the trigger-maintained copy when responses arrive and are deleted.
 */
import * as ss from 'simple-statistics';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { newId } from '../../server/src/lib/ids.js';
import { compactSegmentCounts } from '../../server/src/modules/analytics/repository.js';
import { forgetReleases, generate, numbers, round, valuesOf, type Generated } from './fixtures.js';

let t: TestService;
let client: ReturnType<TestService['client']>;
let data: Generated;
let organizationId: string;

beforeAll(async () => {
  t = await startTestService();
  const tenant = await t.createTenant('BUSINESS');
  organizationId = tenant.organizationId;
  client = t.client(tenant.liveKey);
  data = await generate(t, client, organizationId, 7);
});
afterAll(async () => {
  await t?.close();
});

type Responses = Generated['responses'];
type Stats = NonNullable<Awaited<ReturnType<typeof staticOf>>>['questions'][number];

/**
 * Static analytics of the survey as the service computes them. These tests check the figures against every change
 * of the survey's responses, one response at a time, which the audit of released results rightly withholds (a
 * result one response apart from an earlier one gives that response away); so each asks as of a survey that has
 * released nothing yet, by forgetting the audit's record first. The audit has tests of its own
 * (release-audit*.test.ts).
 */
async function staticOf(query: Record<string, string> = {}, surveyId = data.surveyId) {
  await forgetReleases(t, surveyId);
  const {
    data: body,
    response,
    error,
  } = await client.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: surveyId }, query } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return body!.data;
}

/** A figure rounded to `decimals` by the service, against the exact value computed here. */
function expectRounded(actual: number | null | undefined, exact: number, decimals: number) {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - exact)).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-9);
}

/** Every figure of every question, recomputed from the raw answers. */
function expectQuestions(questions: Stats[], responses: Responses) {
  const byId = new Map(questions.map((q) => [q.questionId, q]));
  const nps = byId.get('nps')!;
  const npsValues = numbers(valuesOf(responses, 'nps'));
  const promoters = npsValues.filter((v) => v >= 9).length;
  const detractors = npsValues.filter((v) => v <= 6).length;
  const n = npsValues.length;
  const p = promoters / n;
  const d = detractors / n;
  expect(nps).toMatchObject({
    type: 'nps',
    answeredCount: n,
    promoters,
    passives: n - promoters - detractors,
    detractors,
    score: round(100 * (p - d), 1),
    marginOfError: round(1.96 * 100 * Math.sqrt((p + d - (p - d) ** 2) / n), 1),
  });
  if (nps.type === 'nps')
    expect(nps.distribution).toEqual(
      Array.from({ length: 11 }, (_, value) => ({ value, count: npsValues.filter((v) => v === value).length })),
    );

  for (const [id, min, max] of [
    ['tools', 1, 5],
    ['manager', 1, 5],
    ['growth', 0, 10],
  ] as const) {
    const values = numbers(valuesOf(responses, id));
    const stats = byId.get(id)!;
    expect(stats.type).toBe('rating');
    if (stats.type !== 'rating') continue;
    expect(stats.answeredCount).toBe(values.length);
    expectRounded(stats.average, ss.mean(values), 2);
    expect(stats.median).toBe(ss.median(values));
    expectRounded(stats.standardDeviation, ss.sampleStandardDeviation(values), 2);
    expect(stats.distribution).toEqual(
      Array.from({ length: max - min + 1 }, (_, i) => ({
        value: min + i,
        count: values.filter((v) => v === min + i).length,
      })),
    );
  }

  const where = byId.get('where')!;
  const whereValues = valuesOf(responses, 'where');
  if (where.type !== 'single_choice') throw new Error('expected single_choice');
  expect(where.answeredCount).toBe(whereValues.length);
  for (const choice of where.choices) {
    const count = whereValues.filter((v) => v === choice.choiceId).length;
    expect(choice).toMatchObject({ count, percentage: round((100 * count) / whereValues.length, 1) });
  }

  const perks = byId.get('perks')!;
  const perkValues = valuesOf(responses, 'perks') as string[][];
  if (perks.type !== 'multiple_choice') throw new Error('expected multiple_choice');
  expect(perks.answeredCount).toBe(perkValues.length);
  for (const choice of perks.choices) {
    const count = perkValues.filter((v) => v.includes(choice.choiceId)).length;
    // Shares over respondents who answered the question, not over selections.
    expect(choice).toMatchObject({ count, percentage: round((100 * count) / perkValues.length, 1) });
  }

  const change = byId.get('change')!;
  const texts = valuesOf(responses, 'change') as string[];
  if (change.type !== 'text') throw new Error('expected text');
  expect(change.answeredCount).toBe(texts.length);
  // Characters are Unicode code points ("é" is one).
  expectRounded(change.averageLength, ss.mean(texts.map((text) => [...text].length)), 1);
}

describe('getStaticAnalytics', () => {
  it('computes every figure of the whole survey exactly', async () => {
    const result = await staticOf();
    expect(result).toMatchObject({
      surveyId: data.surveyId,
      suppressed: false,
      anonymityThreshold: 5,
      responseCount: data.responses.length,
      segments: [],
    });
    expect(result.questions.map((q) => q.questionId)).toEqual([
      'nps',
      'tools',
      'manager',
      'growth',
      'where',
      'perks',
      'change',
    ]);
    expectQuestions(result.questions, data.responses);
  });

  it('reports the daily series in UTC days, adding up to the response count', async () => {
    const result = await staticOf();
    const expected = new Map<string, number>();
    for (const r of data.responses)
      expected.set(
        r.submittedAt.toISOString().slice(0, 10),
        (expected.get(r.submittedAt.toISOString().slice(0, 10)) ?? 0) + 1,
      );
    expect(result.daily).toEqual(
      [...expected].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, count]) => ({ date, count })),
    );
    expect(result.daily.reduce((sum, day) => sum + day.count, 0)).toBe(result.responseCount);
  });

  it('narrows to a time window (inclusive start, exclusive end)', async () => {
    const after = new Date(Date.UTC(2026, 9, 3));
    const before = new Date(Date.UTC(2026, 9, 7, 12));
    const inWindow = data.responses.filter((r) => r.submittedAt >= after && r.submittedAt < before);
    const result = await staticOf({ submittedAfter: after.toISOString(), submittedBefore: before.toISOString() });
    expect(result.responseCount).toBe(inWindow.length);
    expectQuestions(result.questions, inWindow);
  });

  it('breaks down by department with suppression and the subtraction guard', async () => {
    const result = await staticOf({ segmentBy: 'department' });
    // Legal (3), Finance (2) and the anonymous responses (4) are under 5; together they hold 9 ≥ 5, so no
    // further group is needed. Shown groups carry exact figures.
    const shown = result.segments.filter((s) => !s.suppressed);
    expect(shown.map((s) => s.value)).toEqual(['Engineering', 'Sales', 'People']);
    expect(
      result.segments
        .filter((s) => s.suppressed)
        .map((s) => s.value)
        .sort(),
    ).toEqual(['Finance', 'Legal', null].sort());
    for (const segment of result.segments) {
      if (segment.suppressed) {
        expect(segment).toEqual({
          value: segment.value,
          suppressed: true,
          suppressionReason: 'threshold',
          responseCount: null,
          questions: null,
        });
        continue;
      }
      const members = data.responses.filter((r) => r.respondent && data.department.get(r.respondent) === segment.value);
      expect(segment.responseCount).toBe(members.length);
      expectQuestions(segment.questions!, members);
    }
  });

  it('suppresses the next smallest group when the small groups alone could be worked out by subtraction', async () => {
    await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 26 } });
    try {
      const result = await staticOf({ segmentBy: 'department' });
      // Under 26: Sales 25, People 9, Legal 3, Finance 2, anonymous 4 → 43 hidden ≥ 26: Engineering stays.
      expect(result.segments.filter((s) => !s.suppressed).map((s) => s.value)).toEqual(['Engineering']);
    } finally {
      await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 5 } });
    }
    // A survey where one small group alone is hidden: its group would be total − shown, so the next smallest goes.
    const other = await generate(t, client, organizationId, 11, 0);
    const result = await staticOf({ segmentBy: 'location' }, other.surveyId);
    expect(result.segments.every((s) => !s.suppressed)).toBe(true);
    await t.db
      .deleteFrom('responses')
      .where('survey_id', '=', other.surveyId)
      .where(
        'respondent_external_id',
        'in',
        other.responses.filter((r) => r.respondent?.startsWith('ENG')).map((r) => r.respondent!),
      )
      .execute();
    const small = await staticOf({ segmentBy: 'department' }, other.surveyId);
    // Legal 3 + Finance 2 = 5 hidden: enough. Now raise the threshold to 6: hidden 5 < 6, so People (9) goes too.
    expect(
      small.segments
        .filter((s) => s.suppressed)
        .map((s) => s.value)
        .sort(),
    ).toEqual(['Finance', 'Legal']);
    await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 6 } });
    try {
      const guarded = await staticOf({ segmentBy: 'department' }, other.surveyId);
      expect(
        guarded.segments
          .filter((s) => s.suppressed)
          .map((s) => s.value)
          .sort(),
      ).toEqual(['Finance', 'Legal', 'People']);
      expect(guarded.segments.filter((s) => !s.suppressed).map((s) => s.value)).toEqual(['Sales']);
    } finally {
      await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 5 } });
    }
  });

  it('suppresses a result under the threshold as a whole', async () => {
    const after = new Date(Date.UTC(2026, 9, 1));
    const inWindow = data.responses.filter(
      (r) => r.submittedAt >= after && r.submittedAt < new Date(after.getTime() + 3_600_000),
    );
    expect(inWindow.length).toBeLessThan(5);
    const result = await staticOf({
      submittedAfter: after.toISOString(),
      submittedBefore: new Date(after.getTime() + 3_600_000).toISOString(),
      segmentBy: 'department',
    });
    expect(result).toMatchObject({
      suppressed: true,
      responseCount: 0,
      questions: [],
      daily: [],
      segments: [],
      responseRate: null,
    });
  });

  it('counts respondents, not responses, where one person may answer several times', async () => {
    const created = await client.POST('/api/v1/surveys', {
      body: {
        title: 'Repeat',
        questions: [{ id: 'nps', type: 'nps', text: 'Recommend?' }],
        settings: { allowMultipleResponses: true },
      },
    });
    const id = created.data!.data.id;
    await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id } } });
    // Two people, four answers each: eight responses, but only two respondents.
    for (let i = 0; i < 8; i++) {
      const sent = await client.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id } },
        body: { respondentExternalId: `ENG-7-${i % 2}`, answers: [{ questionId: 'nps', value: 9 }] },
      });
      expect(sent.response.status).toBe(201);
    }
    expect(await staticOf({}, id)).toMatchObject({ suppressed: true, responseCount: 0, questions: [] });
    // Three more people answering once: five respondents, eleven responses.
    for (let i = 2; i < 5; i++)
      await client.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id } },
        body: { respondentExternalId: `ENG-7-${i}`, answers: [{ questionId: 'nps', value: 3 }] },
      });
    const shown = await staticOf({ segmentBy: 'department' }, id);
    expect(shown).toMatchObject({ suppressed: false, responseCount: 11 });
    // All five are in Engineering: one group of five respondents, shown with its eleven responses.
    expect(shown.segments).toEqual([
      expect.objectContaining({ value: 'Engineering', suppressed: false, responseCount: 11 }),
    ]);
  });

  it('groups by tenure bands and custom attributes', async () => {
    const byLevel = await staticOf({ segmentBy: 'attributes.level' });
    expect(byLevel.segments.map((s) => s.value).sort((a, b) => String(a).localeCompare(String(b)))).toEqual([
      'L0',
      'L1',
      'L2',
      null,
    ]);
    // The anonymous responses (4) are under 5 on their own, so the guard hides the smallest level too.
    const hidden = byLevel.segments.filter((s) => s.suppressed);
    expect(hidden.map((s) => s.value)).toContain(null);
    expect(hidden).toHaveLength(2);
    for (const segment of byLevel.segments.filter((s) => !s.suppressed)) {
      const level = Number(segment.value!.slice(1));
      const people = [...data.department.keys()].filter((_, i) => i % 3 === level);
      expect(segment.responseCount).toBe(
        data.responses.filter((r) => r.respondent && people.includes(r.respondent)).length,
      );
    }
    const byTenure = await staticOf({ segmentBy: 'tenure' });
    // Hire dates 2010–2026 in March, responses in October 2026: every band appears.
    const bands = byTenure.segments.map((s) => s.value);
    expect(bands).toEqual(
      expect.arrayContaining(['under_1_year', '1_to_2_years', '2_to_5_years', '5_to_10_years', '10_years_or_more']),
    );
  });

  it('stays exact when responses arrive through the API and are deleted', async () => {
    const before = await staticOf();
    const submitted = await client.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: data.surveyId } },
      body: {
        answers: [
          { questionId: 'nps', value: 10 },
          { questionId: 'tools', value: 5 },
          { questionId: 'perks', value: ['learn', 'leave'] },
        ],
      },
    });
    expect(submitted.response.status).toBe(201);
    const added = {
      id: submitted.data!.data.id,
      respondent: null,
      submittedAt: new Date(submitted.data!.data.submittedAt),
      answers: submitted.data!.data.answers,
    };
    const after = await staticOf();
    expect(after.responseCount).toBe(before.responseCount + 1);
    expectQuestions(after.questions, [...data.responses, added]);
    const removed = data.responses[0]!;
    expect(
      (
        await client.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
          params: { path: { id: data.surveyId, responseId: removed.id } },
        })
      ).response.status,
    ).toBe(200);
    const rest = [...data.responses.slice(1), added];
    const final = await staticOf();
    expect(final.responseCount).toBe(rest.length);
    expectQuestions(final.questions, rest);
    // Rows changed in place (not an API operation, but a migration or a later link could do it) are followed too.
    const changed = rest[0]!;
    changed.answers = changed.answers.map((a) =>
      a.questionId === 'nps' ? { ...a, value: a.value === 0 ? 10 : 0 } : a,
    );
    await t.db
      .updateTable('responses')
      .set({ answers: JSON.stringify(changed.answers) })
      .where('id', '=', changed.id)
      .execute();
    expectQuestions((await staticOf()).questions, rest);
    data.responses = rest;
  });

  it("adds each question's correlation with an outcome question", async () => {
    const result = await staticOf({ outcomeQuestionId: 'nps' });
    for (const id of ['tools', 'manager', 'growth']) {
      const pairs = data.responses.flatMap((r) => {
        const x = r.answers.find((a) => a.questionId === id)?.value as number | undefined;
        const y = r.answers.find((a) => a.questionId === 'nps')!.value as number;
        return x === undefined ? [] : [[x, y] as const];
      });
      const stats = result.questions.find((q) => q.questionId === id)!;
      if (stats.type !== 'rating') throw new Error('expected rating');
      expect(stats.outcomeCorrelation?.outcomeQuestionId).toBe('nps');
      expect(stats.outcomeCorrelation?.responseCount).toBe(pairs.length);
      expect(stats.outcomeCorrelation?.correlation).toBeCloseTo(
        ss.sampleCorrelation(
          pairs.map((p) => p[0]),
          pairs.map((p) => p[1]),
        ),
        3,
      );
    }
    expect(result.questions.find((q) => q.questionId === 'nps')).not.toHaveProperty('outcomeCorrelation');
    expect((await staticOf()).questions.some((q) => 'outcomeCorrelation' in q)).toBe(false);
    const refused = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: data.surveyId }, query: { outcomeQuestionId: 'change' } },
    });
    expect(refused.response.status).toBe(400);
  });

  it('answers whole days of a one-response-per-person survey from the exact daily counts, which follow every change', async () => {
    const once = await generate(t, client, organizationId, 13, 6, false);
    // The daily counts: the `#` rows, code −1 is the responses.
    const { rows: counts } = await sql<{ n: string }>`
      select sum(u.n) as n from analytics_segment_cells, unnest(codes, counts) as u(code, n)
      where survey_id = ${once.surveyId} and field = '#' and u.code = -1`.execute(t.db);
    expect(Number(counts[0]!.n)).toBe(once.responses.length);
    const check = async (responses: typeof once.responses) => {
      const whole = await staticOf({}, once.surveyId);
      expect(whole.responseCount).toBe(responses.length);
      expectQuestions(whole.questions, responses);
      const after = new Date(Date.UTC(2026, 9, 2));
      const before = new Date(Date.UTC(2026, 9, 8));
      const days = await staticOf(
        { submittedAfter: after.toISOString(), submittedBefore: before.toISOString() },
        once.surveyId,
      );
      const inWindow = responses.filter((r) => r.submittedAt >= after && r.submittedAt < before);
      expect(days.responseCount).toBe(inWindow.length);
      expectQuestions(days.questions, inWindow);
      expect(days.daily.reduce((sum, d) => sum + d.count, 0)).toBe(inWindow.length);
      // A breakdown: the whole from the daily counts, the groups from the scan — both exact.
      const byDepartment = await staticOf({ segmentBy: 'department' }, once.surveyId);
      expectQuestions(byDepartment.questions, responses);
      for (const segment of byDepartment.segments.filter((g) => !g.suppressed)) {
        const members = responses.filter(
          (r) => (r.respondent ? once.department.get(r.respondent) : null) === segment.value,
        );
        expect(segment.responseCount).toBe(members.length);
        expectQuestions(segment.questions!, members);
      }
      expect(byDepartment.segments.filter((g) => !g.suppressed).length).toBeGreaterThan(1);
    };
    await check(once.responses);
    // New responses, a deletion and an in-place change: the counts stay exact.
    const sent = await client.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: once.surveyId } },
      body: {
        answers: [
          { questionId: 'nps', value: 0 },
          { questionId: 'tools', value: 1 },
          { questionId: 'where', value: 'home' },
        ],
      },
    });
    const added = {
      id: sent.data!.data.id,
      respondent: null,
      submittedAt: new Date(sent.data!.data.submittedAt),
      answers: sent.data!.data.answers,
    };
    await client.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: once.surveyId, responseId: once.responses[1]!.id } },
    });
    const moved = once.responses[2]!;
    moved.submittedAt = new Date(Date.UTC(2026, 9, 4, 8));
    await t.db.updateTable('responses').set({ submitted_at: moved.submittedAt }).where('id', '=', moved.id).execute();
    const final = [...once.responses.filter((_, i) => i !== 1), added];
    await check(final);
    // The deltas fold into one row per key; every figure stays the same.
    const keys = () =>
      t.db
        .selectFrom('analytics_segment_cells')
        .select(['day'])
        .select((eb) => eb.fn.countAll<number>().as('rows'))
        .where('survey_id', '=', once.surveyId)
        .where('field', '=', '#')
        .groupBy(['day'])
        .execute();
    expect((await keys()).some((k) => Number(k.rows) > 1)).toBe(true);
    expect(await compactSegmentCounts(t.db)).toBeGreaterThan(0);
    expect((await keys()).every((k) => Number(k.rows) === 1)).toBe(true);
    await check(final);
  });

  it('never refuses a stored response, even one with values the API would not accept', async () => {
    const before = await staticOf();
    const id = newId('rsp');
    await t.db
      .insertInto('responses')
      .values({
        id,
        survey_id: data.surveyId,
        organization_id: organizationId,
        environment: 'LIVE',
        respondent_external_id: null,
        dedupe_key: null,
        submitted_at: new Date(Date.UTC(2026, 9, 5)),
        answers: JSON.stringify([
          { questionId: 'nps', value: 'nine' },
          { questionId: 'tools', value: 2.5 },
          { questionId: 'perks', value: 'learn' },
          { value: 3 },
          7,
        ]),
      })
      .execute();
    const after = await staticOf();
    expect(after.responseCount).toBe(before.responseCount + 1);
    // The response counts; its unusable values are not answers to anything.
    expect(after.questions.map((q) => q.answeredCount)).toEqual(before.questions.map((q) => q.answeredCount));
    await t.db.deleteFrom('responses').where('id', '=', id).execute();
    expect((await staticOf()).responseCount).toBe(before.responseCount);
  });

  it('refuses bad parameters and unknown surveys or distributions', async () => {
    const bad = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: data.surveyId }, query: { segmentBy: 'salary' as never } },
    });
    expect(bad.response.status).toBe(400);
    const window = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: {
        path: { id: data.surveyId },
        query: { submittedAfter: '2026-10-05T00:00:00Z', submittedBefore: '2026-10-01T00:00:00Z' },
      },
    });
    expect(window.response.status).toBe(400);
    expect(window.error?.error.details?.[0]).toMatchObject({ path: '/query/submittedBefore', code: 'out_of_range' });
    expect(
      (await client.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: 'srv_nope' } } })).response
        .status,
    ).toBe(404);
    const distribution = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: data.surveyId }, query: { distributionId: 'dst_01JD3MF1P6R2T8XK4W9Z3C5V7N' } },
    });
    expect(distribution.response.status).toBe(404);
  });

  it('needs analytics:read, and only an administrator key changes the threshold', async () => {
    const reader = t.client((await t.createKey(organizationId, { scopes: ['analytics:read'] })).key);
    expect(
      (await reader.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: data.surveyId } } })).response
        .status,
    ).toBe(200);
    const settings = await reader.GET('/api/v1/settings/analytics');
    expect(settings.data?.data.anonymityThreshold).toBe(5);
    const refused = await reader.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 3 } });
    expect(refused.response.status).toBe(403);
    const tooLow = await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 2 } });
    expect(tooLow.response.status).toBe(400);
    expect(tooLow.error?.error.details?.[0]).toMatchObject({ path: '/body/anonymityThreshold', code: 'minimum' });
    const writer = t.client((await t.createKey(organizationId, { scopes: ['surveys:*'] })).key);
    expect(
      (await writer.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: data.surveyId } } })).response
        .status,
    ).toBe(403);
    // TEST is a world of its own: its threshold is untouched by LIVE's.
    const testKey = t.client((await t.createKey(organizationId, { environment: 'TEST' })).key);
    await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 8 } });
    expect((await testKey.GET('/api/v1/settings/analytics')).data?.data).toEqual({
      anonymityThreshold: 5,
      updatedAt: null,
    });
    expect((await client.GET('/api/v1/settings/analytics')).data?.data.anonymityThreshold).toBe(8);
    await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 5 } });
  });
});
