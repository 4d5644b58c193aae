/** Concurrent submissions: every one stored exactly once, and one response per respondent holds under a race. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

async function activeSurvey() {
  const id = (await live.POST('/api/v1/surveys', { body: surveyBody() })).data!.data.id;
  await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id } } });
  return id;
}

describe('concurrent submissions', () => {
  it('stores 200 concurrent responses of distinct respondents, with responseCount 200', async () => {
    const id = await activeSurvey();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        live.POST('/api/v1/surveys/{id}/responses', {
          params: { path: { id } },
          body: { answers: validAnswers, respondentExternalId: `E-${i}` },
        }),
      ),
    );
    expect(results.map((r) => r.response.status).filter((s) => s !== 201)).toEqual([]);
    const stored = await t.db
      .selectFrom('responses')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('survey_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(stored.n).toBe(200);
    expect(new Set(results.map((r) => r.data!.data.id)).size).toBe(200);
    const survey = await live.GET('/api/v1/surveys/{id}', { params: { path: { id } } });
    expect(survey.data?.data.responseCount).toBe(200);
  });

  it('stores exactly one of 20 concurrent responses of one respondent (19 × 409 duplicate_response)', async () => {
    const id = await activeSurvey();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        live.POST('/api/v1/surveys/{id}/responses', {
          params: { path: { id } },
          body: { answers: validAnswers, respondentExternalId: 'E-same' },
        }),
      ),
    );
    const statuses = results.map((r) => r.response.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect(
      results.filter((r) => r.response.status === 409).every((r) => r.error?.error.code === 'duplicate_response'),
    ).toBe(true);
    const rows = await t.db.selectFrom('responses').select('id').where('survey_id', '=', id).execute();
    expect(rows).toHaveLength(1);
    expect((await live.GET('/api/v1/surveys/{id}', { params: { path: { id } } })).data?.data.responseCount).toBe(1);
  });

  it('never counts a response that a concurrent pause refused', async () => {
    const id = await activeSurvey();
    const submissions = Array.from({ length: 30 }, (_, i) =>
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id } },
        body: { answers: validAnswers, respondentExternalId: `P-${i}` },
      }),
    );
    const pause = live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id } } });
    const results = await Promise.all(submissions);
    expect((await pause).response.status).toBe(200);
    const accepted = results.filter((r) => r.response.status === 201).length;
    expect(results.every((r) => r.response.status === 201 || r.error?.error.code === 'invalid_state')).toBe(true);
    const rows = await t.db.selectFrom('responses').select('id').where('survey_id', '=', id).execute();
    expect(rows).toHaveLength(accepted);
    expect((await live.GET('/api/v1/surveys/{id}', { params: { path: { id } } })).data?.data.responseCount).toBe(
      accepted,
    );
  });
});

describe('response counts kept as appended deltas', () => {
  it('count each submission and deletion exactly, and stay exact while the fold job runs among concurrent submissions', async () => {
    const { foldResponseCounts } = await import('../../server/src/modules/surveys/repository.js');
    const id = await activeSurvey();
    const submit = (i: number) =>
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id } },
        body: { answers: validAnswers, respondentExternalId: `F-${i}` },
      });
    const first = await Promise.all(Array.from({ length: 40 }, (_, i) => submit(i)));
    // Folding while 40 more arrive: no delta is folded twice or lost.
    const [, folded] = await Promise.all([
      Promise.all(Array.from({ length: 40 }, (_, i) => submit(40 + i))),
      foldResponseCounts(t.db),
    ]);
    expect(folded).toBeGreaterThan(0);
    const removed = first[0]!.data!.data.id;
    expect(
      (
        await live.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
          params: { path: { id, responseId: removed } },
        })
      ).response.status,
    ).toBe(200);
    const count = async () =>
      (await live.GET('/api/v1/surveys/{id}', { params: { path: { id } } })).data!.data.responseCount;
    expect(await count()).toBe(79);
    const listed = (await live.GET('/api/v1/surveys', { params: { query: { pageSize: 100 } } })).data!.data.find(
      (s) => s.id === id,
    );
    expect(listed?.responseCount).toBe(79);
    await foldResponseCounts(t.db);
    const pending = await t.db.selectFrom('survey_response_counts').select('n').where('survey_id', '=', id).execute();
    expect(pending).toEqual([]);
    const row = await t.db
      .selectFrom('surveys')
      .select('response_count')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.response_count).toBe(79);
    expect(await count()).toBe(79);
  });
});
