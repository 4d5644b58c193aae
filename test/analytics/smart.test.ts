/**
 * getSmartAnalytics against independent computations over the raw generated answers: segments, heatmap,
 * drivers (correlations, means, favourable shares, weights adding up to the least-squares R²), focus areas,
 * comparisons; and, with distributions, the snapshot rule, participation and the response rate.
 */
import { randomBytes } from 'node:crypto';
import type { components } from '@survey-service/sdk';
import * as ss from 'simple-statistics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/src/lib/ids.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { generate, numbers, random, round, valuesOf, type Generated } from './fixtures.js';

type QuestionInput = components['schemas']['QuestionInput'];
type Answer = components['schemas']['Answer'];

let t: TestService;
let client: ReturnType<TestService['client']>;
let data: Generated;
let organizationId: string;

beforeAll(async () => {
  t = await startTestService();
  const tenant = await t.createTenant('BUSINESS');
  organizationId = tenant.organizationId;
  client = t.client(tenant.liveKey);
  data = await generate(t, client, organizationId, 21);
});
afterAll(async () => {
  await t?.close();
});

async function smartOf(query: Record<string, string> = {}, surveyId = data.surveyId) {
  const {
    data: body,
    response,
    error,
  } = await client.GET('/api/v1/surveys/{id}/analytics/smart', {
    params: { path: { id: surveyId }, query: query as never },
  });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return body!.data;
}

const answer = (r: Generated['responses'][number], id: string) =>
  r.answers.find((a) => a.questionId === id)?.value as number | undefined;

/** Least-squares R² with intercept (normal equations), independent of the relative-weights code. */
function leastSquaresRSquared(y: number[], xs: number[][]): number {
  const rows = y.map((_, i) => [1, ...xs.map((x) => x[i]!)]);
  const p = rows[0]!.length;
  const a = Array.from({ length: p }, (_, i) => [
    ...Array.from({ length: p }, (_, j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)),
    rows.reduce((s, r, k) => s + r[i]! * y[k]!, 0),
  ]);
  for (let c = 0; c < p; c++) {
    for (let r = 0; r < p; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= p; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  const beta = a.map((row, i) => row[p]! / row[i]!);
  const fitted = rows.map((r) => r.reduce((s, v, j) => s + v * beta[j]!, 0));
  const mean = ss.mean(y);
  return 1 - y.reduce((s, v, i) => s + (v - fitted[i]!) ** 2, 0) / y.reduce((s, v) => s + (v - mean) ** 2, 0);
}

describe('getSmartAnalytics', () => {
  it('segments and heatmap by department, with exact scores and differences', async () => {
    const result = await smartOf({ segmentBy: 'department' });
    expect(result).toMatchObject({
      segmentBy: 'department',
      suppressed: false,
      responseCount: data.responses.length,
      anonymityThreshold: 5,
    });
    const engineering = data.responses.filter(
      (r) => r.respondent && data.department.get(r.respondent) === 'Engineering',
    );
    const segment = result.segments.find((s) => s.value === 'Engineering')!;
    const nps = numbers(valuesOf(engineering, 'nps'));
    expect(segment.responseCount).toBe(engineering.length);
    expect(segment.nps).toBeCloseTo(
      (100 * (nps.filter((v) => v >= 9).length - nps.filter((v) => v <= 6).length)) / nps.length,
      1,
    );
    const ratings = [
      ...numbers(valuesOf(engineering, 'tools')),
      ...numbers(valuesOf(engineering, 'manager')),
      ...numbers(valuesOf(engineering, 'growth')),
    ];
    expect(segment.averageRating).toBeCloseTo(ss.mean(ratings), 2);

    expect(result.heatmap.metric).toBe('mean');
    expect(result.heatmap.questions.map((q) => q.questionId)).toEqual(['nps', 'tools', 'manager', 'growth']);
    const row = result.heatmap.rows.find((r) => r.value === 'Engineering')!;
    for (const cell of row.cells) {
      const overall = ss.mean(numbers(valuesOf(data.responses, cell.questionId)));
      const mine = ss.mean(numbers(valuesOf(engineering, cell.questionId)));
      expect(cell.score).toBeCloseTo(mine, 2);
      expect(cell.difference).toBeCloseTo(mine - overall, 2);
      expect(result.heatmap.questions.find((q) => q.questionId === cell.questionId)!.overall).toBeCloseTo(overall, 2);
    }
    expect(result.heatmap.rows.map((r) => r.value)).toEqual(result.segments.map((s) => s.value));
  });

  it('heatmap of favourable shares (9–10 on NPS, the top two fifths of a rating scale)', async () => {
    const result = await smartOf({ segmentBy: 'location', heatmapMetric: 'favourable' });
    const paris = data.responses.filter(
      (r) => r.respondent && [...data.department.keys()].indexOf(r.respondent) % 2 === 0,
    );
    const row = result.heatmap.rows.find((r) => r.value === 'Paris')!;
    const share = (values: number[], above: number) => (100 * values.filter((v) => v > above).length) / values.length;
    const cuts: Record<string, number> = { nps: 8, tools: 1 + 0.6 * 4, manager: 1 + 0.6 * 4, growth: 6 };
    for (const cell of row.cells)
      expect(cell.score).toBeCloseTo(share(numbers(valuesOf(paris, cell.questionId)), cuts[cell.questionId]!), 1);
  });

  it('drivers by relative weight: exact correlations, weights adding up to R², focus areas', async () => {
    const result = await smartOf();
    const complete = data.responses.filter((r) =>
      ['nps', 'tools', 'manager', 'growth'].every((id) => answer(r, id) !== undefined),
    );
    const y = complete.map((r) => answer(r, 'nps')!);
    const columns = {
      tools: complete.map((r) => answer(r, 'tools')!),
      manager: complete.map((r) => answer(r, 'manager')!),
      growth: complete.map((r) => answer(r, 'growth')!),
    };
    expect(result.driverAnalysis).toMatchObject({
      method: 'relative_weights',
      outcomeQuestionId: 'nps',
      status: 'computed',
      minimumResponses: 30,
      responseCount: complete.length,
    });
    const r2 = leastSquaresRSquared(y, Object.values(columns));
    expect(result.driverAnalysis!.rSquared).toBeCloseTo(r2, 4);
    expect(result.drivers.reduce((s, d) => s + d.relativeWeight, 0)).toBeCloseTo(r2, 3);
    expect(result.drivers.reduce((s, d) => s + d.importance, 0)).toBeCloseTo(100, 0);
    for (const driver of result.drivers) {
      const x = columns[driver.questionId as keyof typeof columns];
      expect(driver.responseCount).toBe(complete.length);
      expect(driver.correlation).toBeCloseTo(ss.sampleCorrelation(x, y), 3);
      expect(driver.average).toBeCloseTo(ss.mean(x), 2);
      const cut = driver.questionId === 'growth' ? 6 : 3.4;
      expect(driver.favourable).toBeCloseTo((100 * x.filter((v) => v > cut).length) / x.length, 1);
    }
    // The generated NPS leans on "tools" most.
    expect(result.drivers[0]!.questionId).toBe('tools');
    expect([...result.drivers].sort((a, b) => b.relativeWeight - a.relativeWeight)).toEqual(result.drivers);
    const meanWeight = result.driverAnalysis!.rSquared! / result.drivers.length;
    const meanFavourable = ss.mean(result.drivers.map((d) => d.favourable));
    expect(result.focusAreas.map((f) => f.questionId)).toEqual(
      result.drivers
        .filter((d) => d.relativeWeight >= meanWeight && d.favourable < meanFavourable)
        .slice(0, 3)
        .map((d) => d.questionId),
    );
  });

  it('takes another outcome, refuses one that is not nps or rating, and needs 30 complete responses', async () => {
    const byTools = await smartOf({ outcomeQuestionId: 'tools' });
    expect(byTools.driverAnalysis?.outcomeQuestionId).toBe('tools');
    expect(byTools.drivers.map((d) => d.questionId).sort()).toEqual(['growth', 'manager']);
    const refused = await client.GET('/api/v1/surveys/{id}/analytics/smart', {
      params: { path: { id: data.surveyId }, query: { outcomeQuestionId: 'where' } },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.details?.[0]).toMatchObject({
      path: '/query/outcomeQuestionId',
      code: 'invalid_value',
    });
    // Two days hold well under 30 complete responses.
    const few = await smartOf({ submittedAfter: '2026-10-01T00:00:00Z', submittedBefore: '2026-10-03T00:00:00Z' });
    expect(few.suppressed).toBe(false);
    expect(few.driverAnalysis).toMatchObject({ status: 'too_few_responses', rSquared: null });
    expect(few.driverAnalysis!.responseCount).toBeLessThan(30);
    expect(few.drivers).toEqual([]);
    expect(few.focusAreas).toEqual([]);
  });

  it('compares with the previous period of the same length', async () => {
    const after = new Date('2026-10-06T00:00:00Z');
    const before = new Date('2026-10-11T00:00:00Z');
    const previousStart = new Date('2026-10-01T00:00:00Z');
    const result = await smartOf({ submittedAfter: after.toISOString(), submittedBefore: before.toISOString() });
    const now = data.responses.filter((r) => r.submittedAt >= after && r.submittedAt < before);
    const then = data.responses.filter((r) => r.submittedAt >= previousStart && r.submittedAt < after);
    expect(result.comparison).toMatchObject({
      basis: 'previous_period',
      submittedAfter: previousStart.toISOString(),
      submittedBefore: after.toISOString(),
      suppressed: false,
      responseCount: then.length,
    });
    const score = (rs: typeof now) => {
      const v = numbers(valuesOf(rs, 'nps'));
      return (100 * (v.filter((x) => x >= 9).length - v.filter((x) => x <= 6).length)) / v.length;
    };
    const nps = result.comparison!.questions.find((q) => q.questionId === 'nps')!;
    expect(nps).toMatchObject({ metric: 'nps', current: round(score(now), 1), previous: round(score(then), 1) });
    expect(nps.change).toBeCloseTo(score(now) - score(then), 1);
    const tools = result.comparison!.questions.find((q) => q.questionId === 'tools')!;
    expect(tools.change).toBeCloseTo(
      ss.mean(numbers(valuesOf(now, 'tools'))) - ss.mean(numbers(valuesOf(then, 'tools'))),
      2,
    );
    expect((await smartOf()).comparison).toBeNull();
    // A window so long that the period before it would start before the year 1: nothing to compare with.
    expect(
      (await smartOf({ submittedAfter: '0500-01-01T00:00:00Z', submittedBefore: '2026-12-01T00:00:00Z' })).comparison,
    ).toBeNull();
  });
});

describe('with distributions', () => {
  let surveyId: string;
  let first: string;
  let second: string;
  const invitedBy: Record<string, string[]> = {};

  beforeAll(async () => {
    // A survey of its own, sent twice: the first send reached 30 people of "Ops", the second 36 of "Ops"+"Data".
    const created = await client.POST('/api/v1/surveys', {
      body: {
        title: 'Pulse',
        questions: [
          { id: 'nps', type: 'nps', text: 'Recommend?' },
          { id: 'tools', type: 'rating', text: 'Tools?', minLabel: 'a', maxLabel: 'b' },
        ],
      },
    });
    surveyId = created.data!.data.id;
    await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });
    const people = Array.from({ length: 40 }, (_, i) => `P-${i}`);
    await t.db
      .insertInto('respondents')
      .values(
        people.map((id, i) => ({
          organization_id: organizationId,
          environment: 'LIVE' as const,
          external_id: id,
          email: `${id.toLowerCase()}@example.com`,
          // Everybody has since moved to "Moved": only the snapshot knows where they were when asked.
          department: 'Moved',
          location: i < 20 ? 'Paris' : 'Rome',
          attributes: '{}',
          content_hash: 'x',
          updated_at: new Date(),
        })),
      )
      .execute();
    first = newId('dst');
    // Another millisecond (the point): ids are time-ordered, so the second distribution's sorts after the first's.
    await new Promise((resolve) => setTimeout(resolve, 5));
    second = newId('dst');
    const rand = random(99);
    let created_at = new Date('2026-10-01T00:00:00Z');
    for (const [id, members, department] of [
      [first, people.slice(0, 30), (i: number) => (i < 20 ? 'Ops' : 'Data')],
      [second, people.slice(4), (i: number) => (i < 24 ? 'Ops' : 'Data')],
    ] as const) {
      await t.db
        .insertInto('distributions')
        .values({
          organization_id: organizationId,
          environment: 'LIVE',
          id,
          survey_id: surveyId,
          status: 'sent',
          method: 'email',
          targeting: JSON.stringify({ filters: [] }),
          schedule: created_at,
          reminder_enabled: false,
          reminder_after_days: 3,
          subject: null,
          message: null,
          link_expires_in_days: 30,
          expires_at: null,
          matched_count: members.length,
          embed_token_hash: null,
          started_at: created_at,
          completed_at: created_at,
          reminder_sent_at: null,
          failure_reason: null,
          created_at,
        })
        .execute();
      await t.db
        .insertInto('distribution_recipients')
        .values(
          members.map((external_id, i) => ({
            organization_id: organizationId,
            environment: 'LIVE' as const,
            distribution_id: id,
            survey_id: surveyId,
            external_id,
            email: `${external_id.toLowerCase()}@example.com`,
            first_name: null,
            last_name: null,
            department: department(i),
            location: null,
            job_title: null,
            manager_id: null,
            hire_date: null,
            employment_type: null,
            attributes: '{}',
            token_hash: randomBytes(32),
            status: 'sent' as const,
            sent_at: created_at,
            responded_at: null,
            response_id: null,
            reminder_sent_at: null,
            error: null,
          })),
        )
        .execute();
      invitedBy[id] = [...members];
      created_at = new Date('2026-10-08T00:00:00Z');
    }
    // Responses: 24 of the first send's recipients, 28 of the second's, and 6 through the API without a distribution.
    const rows = [
      ...invitedBy[first]!.slice(0, 24).map((who) => ({ who, distribution: first, day: 2 })),
      ...invitedBy[second]!.slice(0, 28).map((who) => ({ who, distribution: second, day: 9 })),
      ...people.slice(30, 36).map((who) => ({ who, distribution: null as string | null, day: 10 })),
    ];
    await t.db
      .insertInto('responses')
      .values(
        rows.map((row) => ({
          id: newId('rsp'),
          survey_id: surveyId,
          organization_id: organizationId,
          environment: 'LIVE' as const,
          respondent_external_id: row.who,
          dedupe_key: null,
          distribution_id: row.distribution,
          submitted_at: new Date(Date.UTC(2026, 9, row.day, 12)),
          answers: JSON.stringify([
            { questionId: 'nps', value: Math.floor(rand() * 11) },
            { questionId: 'tools', value: 1 + Math.floor(rand() * 5) },
          ]),
        })),
      )
      .execute();
  });

  it('segments by the snapshot of the distribution a response came through, else the current record', async () => {
    const result = await smartOf({ segmentBy: 'department' }, surveyId);
    const counts = Object.fromEntries(result.segments.map((s) => [s.value, s.responseCount]));
    // First send: P-0..P-23 answered, Ops for i < 20 → 20 Ops, 4 Data. Second send: P-4..P-31, Ops for i < 24 → 24 Ops,
    // 4 Data.
    // Without a distribution: 6 people in their current department, "Moved".
    expect(counts).toEqual({ Ops: 44, Data: 8, Moved: 6 });
  });

  it('filters on the snapshot too, and narrows to one distribution with its response rate', async () => {
    const ops = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: {
        path: { id: surveyId },
        query: { filters: JSON.stringify({ filters: [{ field: 'department', operator: 'equals', value: 'Ops' }] }) },
      },
    });
    expect(ops.data?.data.responseCount).toBe(44);
    const one = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { distributionId: second } },
    });
    expect(one.data?.data).toMatchObject({
      responseCount: 28,
      invitedCount: 36,
      responseRate: round(28 / 36, 3),
      distributionId: second,
    });
    const all = await client.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: surveyId } } });
    // Invited: P-0..P-39 across both sends (40 people); responded among them: everyone who answered (P-0..P-35).
    expect(all.data?.data).toMatchObject({ responseCount: 58, invitedCount: 40, responseRate: round(36 / 40, 3) });
    const other = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { distributionId: newId('dst') } },
    });
    expect(other.response.status).toBe(404);
  });

  it('reports participation by group and compares with the previous distribution', async () => {
    const result = await smartOf({ segmentBy: 'department', distributionId: second }, surveyId);
    expect(result.participation).toMatchObject({ invited: 36, responded: 28, rate: round(28 / 36, 3) });
    // The second send: Ops are P-4..P-27 (24, of whom all answered: P-4..P-31 answered), Data P-28..P-39 (12, of whom 4
    // answered).
    expect(result.participation.segments).toEqual([
      { value: 'Ops', suppressed: false, invited: 24, responded: 24, rate: 1 },
      { value: 'Data', suppressed: false, invited: 12, responded: 4, rate: round(4 / 12, 3) },
    ]);
    expect(result.comparison).toMatchObject({
      basis: 'previous_distribution',
      distributionId: first,
      suppressed: false,
      responseCount: 24,
    });
  });

  it('rejects malformed filters with paths under /query/filters', async () => {
    const notJson = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { filters: '{oops' } },
    });
    expect(notJson.response.status).toBe(400);
    expect(notJson.error?.error.details?.[0]).toMatchObject({ path: '/query/filters', code: 'format' });
    const badOperator = await client.GET('/api/v1/surveys/{id}/analytics/smart', {
      params: {
        path: { id: surveyId },
        query: {
          filters: JSON.stringify({ filters: [{ field: 'department', operator: 'near', value: 'x' }], extra: 1 }),
        },
      },
    });
    expect(badOperator.response.status).toBe(400);
    expect(badOperator.error?.error.details?.map((d) => d.path).sort()).toEqual(['/query/filters/extra']);
    const badValue = await client.GET('/api/v1/surveys/{id}/analytics/smart', {
      params: {
        path: { id: surveyId },
        query: { filters: JSON.stringify({ filters: [{ field: 'department', operator: 'near', value: 'x' }] }) },
      },
    });
    expect(badValue.error?.error.details?.[0]).toMatchObject({
      path: '/query/filters/filters/0/operator',
      code: 'enum',
    });
  });
});

describe('drivers from a Likert grid', () => {
  type Answers = Record<string, Answer['value']>;

  /** A launched survey of `questions` and these responses, written as the fixtures write theirs. */
  async function surveyWith(questions: QuestionInput[], responses: Answers[]): Promise<string> {
    const created = await client.POST('/api/v1/surveys', { body: { title: 'Grid drivers', questions } });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const surveyId = created.data!.data.id;
    const launched = await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });
    expect(launched.response.status).toBe(200);
    await t.db
      .insertInto('responses')
      .values(
        responses.map((answers, i) => ({
          id: newId('rsp'),
          survey_id: surveyId,
          organization_id: organizationId,
          environment: 'LIVE' as const,
          respondent_external_id: null,
          dedupe_key: null,
          answers: JSON.stringify(Object.entries(answers).map(([questionId, value]) => ({ questionId, value }))),
          submitted_at: new Date(Date.UTC(2026, 9, 1) + i * 60_000),
        })),
      )
      .execute();
    return surveyId;
  }

  it('makes each row of a numeric grid a driver (questionId and rowId), N/A rows no value, labelled grids none', async () => {
    const rand = random(7);
    const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
    const responses: Answers[] = [];
    for (let i = 0; i < 70; i++) {
      const drive = int(1, 5);
      const noise = int(1, 5);
      const tools = int(1, 5);
      const nps = Math.max(0, Math.min(10, Math.round(drive * 2 + tools * 0.3 + (rand() - 0.5) * 3)));
      const grid: Record<string, number | null> = { drive, noise };
      // N/A rows with an outcome that contradicts the driving row: read as any value, they would move every figure.
      if (i % 7 === 3) grid.drive = null;
      if (i % 11 === 5) grid.noise = null;
      responses.push({
        eng: i % 7 === 3 ? 10 - nps : nps,
        tools,
        grid,
        kind: { a: ['x', 'y'][i % 2]!, b: ['y', 'x'][i % 3 === 0 ? 0 : 1]! },
      });
    }
    const surveyId = await surveyWith(
      [
        { id: 'eng', type: 'nps', text: 'Recommend us?' },
        { id: 'tools', type: 'rating', text: 'I have the tools I need.' },
        {
          id: 'grid',
          type: 'matrix',
          text: 'How much do you agree?',
          rows: [
            { id: 'drive', text: 'My work matters' },
            { id: 'noise', text: 'The canteen is fine' },
          ],
          scale: { min: 1, max: 5 },
          allowNotApplicable: true,
        },
        {
          id: 'kind',
          type: 'matrix',
          text: 'Which?',
          rows: [
            { id: 'a', text: 'A' },
            { id: 'b', text: 'B' },
          ],
          columns: [
            { id: 'x', label: 'X' },
            { id: 'y', label: 'Y' },
          ],
        },
      ],
      responses,
    );
    const result = await smartOf({}, surveyId);

    // Independently: the complete responses are those with a number in the outcome, tools and both rows.
    const grid = (r: Answers) => r.grid as Record<string, number | null>;
    const complete = responses.filter((r) => grid(r).drive !== null && grid(r).noise !== null);
    expect(complete.length).toBeLessThan(responses.length - 10);
    const y = complete.map((r) => r.eng as number);
    const columns: Record<string, number[]> = {
      tools: complete.map((r) => r.tools as number),
      'grid/drive': complete.map((r) => grid(r).drive!),
      'grid/noise': complete.map((r) => grid(r).noise!),
    };
    expect(result.driverAnalysis).toMatchObject({ status: 'computed', responseCount: complete.length });
    expect(result.driverAnalysis!.rSquared).toBeCloseTo(leastSquaresRSquared(y, Object.values(columns)), 4);
    // The labelled grid is categorical: no driver; the driving row ranks first, the noise row last.
    expect(result.drivers.map((d) => `${d.questionId}/${d.rowId ?? ''}`)).toEqual([
      'grid/drive',
      'tools/',
      'grid/noise',
    ]);
    // Static analytics give each numeric row its own correlation with the outcome, over the responses that answered
    // both (pairwise, not only the complete ones); a labelled grid's rows get none.
    const statics = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { outcomeQuestionId: 'eng' } },
    });
    expect(statics.response.status, JSON.stringify(statics.error)).toBe(200);
    const gridStats = statics.data!.data.questions.find((q) => q.questionId === 'grid')!;
    const kindStats = statics.data!.data.questions.find((q) => q.questionId === 'kind')!;
    if (gridStats.type !== 'matrix' || kindStats.type !== 'matrix') throw new Error('expected two matrices');
    for (const row of gridStats.rows) {
      const pairs = responses.filter((r) => grid(r)[row.rowId] !== null);
      expect(pairs.length).toBeLessThan(responses.length);
      expect(row.outcomeCorrelation).toEqual({
        outcomeQuestionId: 'eng',
        responseCount: pairs.length,
        correlation: expect.closeTo(
          ss.sampleCorrelation(
            pairs.map((r) => grid(r)[row.rowId]!),
            pairs.map((r) => r.eng as number),
          ),
          3,
        ),
      });
    }
    for (const row of kindStats.rows) expect(row).not.toHaveProperty('outcomeCorrelation');

    const [drive, tools, noise] = result.drivers;
    expect(drive).toMatchObject({ text: 'My work matters', responseCount: complete.length });
    expect(tools).not.toHaveProperty('rowId');
    expect(noise!.relativeWeight).toBeLessThan(0.05);
    for (const driver of result.drivers) {
      const x = columns[driver.rowId ? `${driver.questionId}/${driver.rowId}` : driver.questionId]!;
      expect(driver.correlation).toBeCloseTo(ss.sampleCorrelation(x, y), 3);
      expect(driver.average).toBeCloseTo(ss.mean(x), 2);
      expect(driver.favourable).toBeCloseTo((100 * x.filter((v) => v > 3.4).length) / x.length, 1);
    }
    const meanWeight = result.driverAnalysis!.rSquared! / result.drivers.length;
    const meanFavourable = ss.mean(result.drivers.map((d) => d.favourable));
    expect(result.focusAreas).toEqual(
      result.drivers
        .filter((d) => d.relativeWeight >= meanWeight && d.favourable < meanFavourable)
        .slice(0, 3)
        .map(({ questionId, rowId, text, relativeWeight, importance, favourable }) => ({
          questionId,
          ...(rowId ? { rowId } : {}),
          text,
          relativeWeight,
          importance,
          favourable,
        })),
    );
  });

  it('keeps the first 55 of many drivers, in survey order', async () => {
    const rand = random(11);
    const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
    // Two grids of 30 rows and a rating: 61 candidates, 1,653 aggregates for the first 55 and the outcome.
    const grids = [1, 2].map((g) => ({
      id: `g${g}`,
      type: 'matrix' as const,
      text: `Grid ${g}`,
      rows: Array.from({ length: 30 }, (_, r) => ({ id: `r${r}`, text: `Statement ${g}.${r}` })),
      scale: { min: 1, max: 5 },
    }));
    const responses = Array.from({ length: 70 }, (): Answers => ({
      eng: int(0, 10),
      ...Object.fromEntries(grids.map((g) => [g.id, Object.fromEntries(g.rows.map((r) => [r.id, int(1, 5)]))])),
      last: int(1, 5),
    }));
    const surveyId = await surveyWith(
      [
        { id: 'eng', type: 'nps', text: 'Recommend us?' },
        ...grids,
        { id: 'last', type: 'rating', text: 'Anything else?' },
      ],
      responses,
    );
    const result = await smartOf({}, surveyId);
    expect(result.driverAnalysis).toMatchObject({ status: 'computed', responseCount: 70 });
    const kept = grids.flatMap((g) => g.rows.map((r) => `${g.id}/${r.id}`)).slice(0, 55);
    expect(result.drivers.map((d) => `${d.questionId}/${d.rowId}`).sort()).toEqual(kept.sort());
    expect(result.drivers.reduce((s, d) => s + d.relativeWeight, 0)).toBeCloseTo(result.driverAnalysis!.rSquared!, 3);
  });
});
