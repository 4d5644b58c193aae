/** Responses through the SDK: submission rules, identity, duplicates, listing with filters, get and delete. */
import type { components } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers, type SurveyCreate } from '../helpers/surveys.js';

type Answer = components['schemas']['Answer'];

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

const path = (id: string) => ({ params: { path: { id } } });

async function activeSurvey(overrides: Partial<SurveyCreate> = {}) {
  const created = await live.POST('/api/v1/surveys', { body: surveyBody(overrides) });
  const id = created.data!.data.id;
  expect((await live.POST('/api/v1/surveys/{id}/launch', path(id))).response.status).toBe(200);
  return id;
}

function submit(surveyId: string, answers: Answer[] = validAnswers, respondentExternalId?: string) {
  return live.POST('/api/v1/surveys/{id}/responses', {
    ...path(surveyId),
    body: { answers, ...(respondentExternalId ? { respondentExternalId } : {}) },
  });
}

describe('submitResponse', () => {
  it('stores a valid response, counts it, and returns it', async () => {
    const surveyId = await activeSurvey();
    const { data, response } = await submit(surveyId, validAnswers, 'E-1');
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({ surveyId, respondentExternalId: 'E-1', answers: validAnswers });
    expect(data!.data.id).toMatch(/^rsp_/);
    const survey = await live.GET('/api/v1/surveys/{id}', path(surveyId));
    expect(survey.data?.data.responseCount).toBe(1);
  });

  const rules: Array<[string, Answer[], string]> = [
    ['unknown question id', [...validAnswers, { questionId: 'q_42', value: 1 }], '/body/answers/5/questionId'],
    ['duplicate answer', [...validAnswers, { questionId: 'q_2', value: 3 }], '/body/answers/5/questionId'],
    ['missing required answer', validAnswers.slice(1), '/body/answers'],
    [
      'rating out of range',
      [
        { questionId: 'q_1', value: 5 },
        { questionId: 'q_2', value: 6 },
      ],
      '/body/answers/1/value',
    ],
    [
      'nps as text',
      [
        { questionId: 'q_1', value: 'nine' },
        { questionId: 'q_2', value: 3 },
      ],
      '/body/answers/0/value',
    ],
    ['unknown choice id', [...validAnswers.slice(0, 2), { questionId: 'q_3', value: 'c_9' }], '/body/answers/2/value'],
    [
      'single_choice not a string',
      [...validAnswers.slice(0, 2), { questionId: 'q_3', value: 2 }],
      '/body/answers/2/value',
    ],
    [
      'multiple_choice not an array',
      [...validAnswers.slice(0, 2), { questionId: 'q_4', value: 'c_1' }],
      '/body/answers/2/value',
    ],
    [
      'duplicate selection',
      [...validAnswers.slice(0, 2), { questionId: 'q_4', value: ['c_1', 'c_1'] }],
      '/body/answers/2/value/1',
    ],
    [
      'too many selections',
      [...validAnswers.slice(0, 2), { questionId: 'q_4', value: ['c_1', 'c_2', 'c_3'] }],
      '/body/answers/2/value',
    ],
    [
      'text too long',
      [...validAnswers.slice(0, 2), { questionId: 'q_5', value: 'x'.repeat(21) }],
      '/body/answers/2/value',
    ],
    ['text not a string', [...validAnswers.slice(0, 2), { questionId: 'q_5', value: 3 }], '/body/answers/2/value'],
  ];
  for (const [name, answers, at] of rules) {
    it(`refuses ${name} with 400 validation_failed and stores nothing`, async () => {
      const surveyId = await activeSurvey();
      const { error, response } = await submit(surveyId, answers);
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('validation_failed');
      expect(error?.error.details?.map((d) => d.path)).toContain(at);
      const stored = await t.db.selectFrom('responses').select('id').where('survey_id', '=', surveyId).execute();
      expect(stored).toHaveLength(0);
    });
  }

  it('refuses nps out of 0–10 and non-integers at the contract (400)', async () => {
    const surveyId = await activeSurvey();
    for (const value of [11, -1, 7.5]) {
      const { error, response } = await submit(surveyId, [
        { questionId: 'q_1', value },
        { questionId: 'q_2', value: 3 },
      ]);
      expect(response.status).toBe(400);
      expect(error?.error.details?.some((d) => d.path?.startsWith('/body/answers/0/value'))).toBe(true);
    }
  });

  it('reports every problem in one answer', async () => {
    const surveyId = await activeSurvey();
    const { error } = await submit(surveyId, [
      { questionId: 'q_2', value: 9 },
      { questionId: 'q_9', value: 1 },
    ]);
    expect(error?.error.details).toHaveLength(3);
  });

  it('accepts responses only while active (409 invalid_state otherwise)', async () => {
    const draft = (await live.POST('/api/v1/surveys', { body: surveyBody() })).data!.data.id;
    const refusedDraft = await submit(draft);
    expect(refusedDraft.response.status).toBe(409);
    expect(refusedDraft.error?.error.message).toContain('draft');
    const surveyId = await activeSurvey();
    await live.POST('/api/v1/surveys/{id}/pause', path(surveyId));
    expect((await submit(surveyId)).error?.error.code).toBe('invalid_state');
    await live.POST('/api/v1/surveys/{id}/close', path(surveyId));
    expect((await submit(surveyId)).error?.error.message).toContain('closed');
  });

  it('drops the identity in anonymous surveys (stored and returned null) and never deduplicates them', async () => {
    const surveyId = await activeSurvey({ settings: { anonymous: true } });
    const first = await submit(surveyId, validAnswers, 'E-7');
    const second = await submit(surveyId, validAnswers, 'E-7');
    expect(first.data?.data.respondentExternalId).toBeNull();
    expect(second.response.status).toBe(201);
    const rows = await t.db
      .selectFrom('responses')
      .select(['respondent_external_id', 'dedupe_key'])
      .where('survey_id', '=', surveyId)
      .execute();
    expect(rows).toEqual([
      { respondent_external_id: null, dedupe_key: null },
      { respondent_external_id: null, dedupe_key: null },
    ]);
  });

  it('refuses a second response of one respondent with 409 duplicate_response, unless multiple are allowed', async () => {
    const once = await activeSurvey();
    expect((await submit(once, validAnswers, 'E-1')).response.status).toBe(201);
    const dup = await submit(once, validAnswers, 'E-1');
    expect(dup.response.status).toBe(409);
    expect(dup.error?.error.code).toBe('duplicate_response');
    expect((await submit(once, validAnswers, 'E-2')).response.status).toBe(201);
    // Without an identity there is nothing to deduplicate on.
    expect((await submit(once)).response.status).toBe(201);
    expect((await submit(once)).response.status).toBe(201);
    expect((await live.GET('/api/v1/surveys/{id}', path(once))).data?.data.responseCount).toBe(4);

    const many = await activeSurvey({ settings: { allowMultipleResponses: true } });
    expect((await submit(many, validAnswers, 'E-1')).response.status).toBe(201);
    expect((await submit(many, validAnswers, 'E-1')).response.status).toBe(201);
  });
});

describe('listResponses, getResponse, deleteResponse', () => {
  it('lists newest first with pagination edges', async () => {
    const surveyId = await activeSurvey({ settings: { allowMultipleResponses: true } });
    const empty = await live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId }, query: {} } });
    expect(empty.data?.data).toEqual([]);
    expect(empty.data?.pagination).toEqual({ page: 1, pageSize: 20, totalItems: 0, totalPages: 0, hasMore: false });

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submit(surveyId, validAnswers, `E-${i}`)).data!.data.id);
    const list = (page: number, pageSize: number) =>
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId }, query: { page, pageSize } } });

    const first = await list(1, 2);
    expect(first.data?.data.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    expect(first.data?.pagination).toEqual({ page: 1, pageSize: 2, totalItems: 5, totalPages: 3, hasMore: true });
    const last = await list(3, 2);
    expect(last.data?.data.map((r) => r.id)).toEqual([ids[0]]);
    expect(last.data?.pagination.hasMore).toBe(false);
    const beyond = await list(9, 2);
    expect(beyond.data?.data).toEqual([]);
    expect(beyond.data?.pagination).toEqual({ page: 9, pageSize: 2, totalItems: 5, totalPages: 3, hasMore: false });
    for (const pageSize of [0, 101]) expect((await list(1, pageSize)).response.status).toBe(400);
    expect((await list(0, 10)).response.status).toBe(400);
  });

  it('filters by submission window and respondent', async () => {
    const surveyId = await activeSurvey({ settings: { allowMultipleResponses: true } });
    const a = (await submit(surveyId, validAnswers, 'E-A')).data!.data;
    const b = (await submit(surveyId, validAnswers, 'E-B')).data!.data;
    await submit(surveyId, validAnswers, 'E-A');
    // Spread the submissions in time, so the window filters are exact.
    await t.db
      .updateTable('responses')
      .set({ submitted_at: new Date('2026-01-01T00:00:00.000Z') })
      .where('id', '=', a.id)
      .execute();
    await t.db
      .updateTable('responses')
      .set({ submitted_at: new Date('2026-02-01T00:00:00.000Z') })
      .where('id', '=', b.id)
      .execute();
    const query = (q: Record<string, string>) =>
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId }, query: q } });

    expect((await query({ respondentExternalId: 'E-A' })).data?.data).toHaveLength(2);
    expect((await query({ respondentExternalId: 'E-Z' })).data?.data).toHaveLength(0);
    const window = await query({
      submittedAfter: '2026-01-01T00:00:00.000Z',
      submittedBefore: '2026-02-01T00:00:00.000Z',
    });
    expect(window.data?.data.map((r) => r.id)).toEqual([a.id]);
    expect((await query({ submittedBefore: '2026-03-01T00:00:00Z' })).data?.data.map((r) => r.id)).toEqual([
      b.id,
      a.id,
    ]);
    expect((await query({ submittedAfter: '2026-01-01T00:00:00.001Z' })).data?.pagination.totalItems).toBe(2);
    const inverted = await query({ submittedAfter: '2026-02-01T00:00:00Z', submittedBefore: '2026-01-01T00:00:00Z' });
    expect(inverted.response.status).toBe(400);
    expect(inverted.error?.error.details?.[0]?.path).toBe('/query/submittedBefore');
    expect((await query({ submittedAfter: 'yesterday' })).response.status).toBe(400);
  });

  it('gets and deletes one response, keeping responseCount in step', async () => {
    const surveyId = await activeSurvey();
    const created = (await submit(surveyId, validAnswers, 'E-1')).data!.data;
    const params = { params: { path: { id: surveyId, responseId: created.id } } };
    const got = await live.GET('/api/v1/surveys/{id}/responses/{responseId}', params);
    expect(got.data?.data).toEqual(created);
    const deleted = await live.DELETE('/api/v1/surveys/{id}/responses/{responseId}', params);
    expect(deleted.data?.data).toEqual({ id: created.id, deleted: true });
    expect((await live.GET('/api/v1/surveys/{id}', path(surveyId))).data?.data.responseCount).toBe(0);
    expect((await live.GET('/api/v1/surveys/{id}/responses/{responseId}', params)).response.status).toBe(404);
    expect((await live.DELETE('/api/v1/surveys/{id}/responses/{responseId}', params)).response.status).toBe(404);
    // Deleting frees the respondent to answer again.
    expect((await submit(surveyId, validAnswers, 'E-1')).response.status).toBe(201);
  });

  it('answers 404 for a response of another survey and for malformed ids', async () => {
    const one = await activeSurvey();
    const other = await activeSurvey();
    const created = (await submit(one)).data!.data;
    const wrong = await live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: other, responseId: created.id } },
    });
    expect(wrong.response.status).toBe(404);
    const malformed = await live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: one, responseId: 'rsp_x' } },
    });
    expect(malformed.error?.error.code).toBe('not_found');
    expect(
      (await live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: 'srv_nope' }, query: {} } })).response
        .status,
    ).toBe(404);
  });
});
