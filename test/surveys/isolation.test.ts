/**
 * Tenant and environment isolation on every survey and response operation (another organization, and the TEST
 * key of the same organization, see 404 for LIVE ids), scopes, and survey listing with its filters and edges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

let t: TestService;
type Client = ReturnType<TestService['client']>;
let orgA: Awaited<ReturnType<typeof tenantWithRaisedLimits>>;
let orgB: Awaited<ReturnType<typeof tenantWithRaisedLimits>>;
let surveyId: string;
let draftId: string;
let responseId: string;

beforeAll(async () => {
  t = await startTestService();
  orgA = await tenantWithRaisedLimits(t);
  orgB = await tenantWithRaisedLimits(t);
  surveyId = (await orgA.live.POST('/api/v1/surveys', { body: surveyBody() })).data!.data.id;
  draftId = (await orgA.live.POST('/api/v1/surveys', { body: surveyBody({ title: 'A draft' }) })).data!.data.id;
  await orgA.live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });
  responseId = (
    await orgA.live.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: { answers: validAnswers, respondentExternalId: 'E-1' },
    })
  ).data!.data.id;
});
afterAll(async () => {
  await t?.close();
});

/** Every operation on org A's LIVE survey and response, as some other caller. */
function everyOperation(client: Client) {
  const id = { params: { path: { id: surveyId } } };
  const draft = { params: { path: { id: draftId } } };
  const rsp = { params: { path: { id: surveyId, responseId } } };
  return {
    getSurvey: () => client.GET('/api/v1/surveys/{id}', id),
    updateSurvey: () => client.PATCH('/api/v1/surveys/{id}', { ...id, body: { title: 'stolen' } }),
    deleteSurvey: () => client.DELETE('/api/v1/surveys/{id}', id),
    launchSurvey: () => client.POST('/api/v1/surveys/{id}/launch', draft),
    pauseSurvey: () => client.POST('/api/v1/surveys/{id}/pause', id),
    closeSurvey: () => client.POST('/api/v1/surveys/{id}/close', id),
    listResponses: () =>
      client.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId }, query: {} } }),
    submitResponse: () => client.POST('/api/v1/surveys/{id}/responses', { ...id, body: { answers: validAnswers } }),
    getResponse: () => client.GET('/api/v1/surveys/{id}/responses/{responseId}', rsp),
    deleteResponse: () => client.DELETE('/api/v1/surveys/{id}/responses/{responseId}', rsp),
  };
}

describe('isolation', () => {
  for (const who of ['another organization', 'the TEST key of the same organization'] as const) {
    for (const operation of Object.keys(everyOperation(null as never))) {
      it(`${operation} answers 404 to ${who}`, async () => {
        const client = who === 'another organization' ? orgB.live : orgA.test;
        const call = everyOperation(client)[operation as keyof ReturnType<typeof everyOperation>];
        const { error, response } = await call();
        expect(response.status).toBe(404);
        expect((error as { error: { code: string } }).error.code).toBe('not_found');
      });
    }
    it(`listSurveys shows nothing of org A's LIVE surveys to ${who}`, async () => {
      const client = who === 'another organization' ? orgB.live : orgA.test;
      const { data } = await client.GET('/api/v1/surveys', { params: { query: {} } });
      expect(data?.data.map((s) => s.id)).not.toContain(surveyId);
      expect(data?.pagination.totalItems).toBe(0);
    });
  }

  it('left org A untouched', async () => {
    const survey = await orgA.live.GET('/api/v1/surveys/{id}', { params: { path: { id: surveyId } } });
    expect(survey.data?.data).toMatchObject({ title: 'Q4 engagement pulse', status: 'active', responseCount: 1 });
    const draft = await orgA.live.GET('/api/v1/surveys/{id}', { params: { path: { id: draftId } } });
    expect(draft.data?.data.status).toBe('draft');
    const rows = await t.db.selectFrom('responses').select('id').where('survey_id', '=', surveyId).execute();
    expect(rows.map((r) => r.id)).toEqual([responseId]);
  });
});

describe('scopes', () => {
  it('a surveys:read key can list and read but not create (403 insufficient_scope)', async () => {
    const { key } = await t.createKey(orgA.organizationId, { scopes: ['surveys:read'] });
    const reader = t.client(key);
    expect((await reader.GET('/api/v1/surveys/{id}', { params: { path: { id: surveyId } } })).response.status).toBe(
      200,
    );
    const { error, response } = await reader.POST('/api/v1/surveys', { body: surveyBody() });
    expect(response.status).toBe(403);
    expect(error?.error.code).toBe('insufficient_scope');
    expect(
      (await reader.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId }, query: {} } })).response
        .status,
    ).toBe(403);
    expect(
      (await reader.POST('/api/v1/surveys/{id}/pause', { params: { path: { id: surveyId } } })).response.status,
    ).toBe(403);
  });

  it('deleting a response needs responses:delete', async () => {
    const { key } = await t.createKey(orgA.organizationId, { scopes: ['responses:read', 'responses:write'] });
    const { response } = await t
      .client(key)
      .DELETE('/api/v1/surveys/{id}/responses/{responseId}', { params: { path: { id: surveyId, responseId } } });
    expect(response.status).toBe(403);
  });
});

describe('listSurveys', () => {
  it('pages newest first, filters by status and title, and checks its bounds', async () => {
    const tenant = await tenantWithRaisedLimits(t);
    const client = tenant.live;
    const empty = await client.GET('/api/v1/surveys', { params: { query: {} } });
    expect(empty.data?.data).toEqual([]);
    expect(empty.data?.pagination).toEqual({ page: 1, pageSize: 20, totalItems: 0, totalPages: 0, hasMore: false });

    const ids: string[] = [];
    for (const title of ['Alpha pulse', 'Beta 100% sure', 'Gamma PULSE', 'Delta', 'Epsilon_x']) {
      ids.push((await client.POST('/api/v1/surveys', { body: surveyBody({ title }) })).data!.data.id);
    }
    await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: ids[1]! } } });
    const list = (query: Record<string, unknown>) => client.GET('/api/v1/surveys', { params: { query } });

    const first = await list({ pageSize: 2 });
    expect(first.data?.data.map((s) => s.id)).toEqual([ids[4], ids[3]]);
    expect(first.data?.pagination).toEqual({ page: 1, pageSize: 2, totalItems: 5, totalPages: 3, hasMore: true });
    const last = await list({ pageSize: 2, page: 3 });
    expect(last.data?.data.map((s) => s.id)).toEqual([ids[0]]);
    expect(last.data?.pagination.hasMore).toBe(false);
    const beyond = await list({ pageSize: 2, page: 4 });
    expect(beyond.data?.data).toEqual([]);
    expect(beyond.data?.pagination).toMatchObject({ page: 4, totalItems: 5, totalPages: 3, hasMore: false });
    for (const pageSize of [0, 101]) {
      const { error, response } = await list({ pageSize });
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('validation_failed');
    }

    expect((await list({ status: 'active' })).data?.data.map((s) => s.id)).toEqual([ids[1]]);
    expect((await list({ status: 'draft' })).data?.pagination.totalItems).toBe(4);
    expect((await list({ status: 'finished' })).response.status).toBe(400);
    expect((await list({ search: 'pulse' })).data?.data.map((s) => s.id)).toEqual([ids[2], ids[0]]);
    // LIKE wildcards in the search are literal.
    expect((await list({ search: '%' })).data?.data.map((s) => s.id)).toEqual([ids[1]]);
    expect((await list({ search: '_' })).data?.data.map((s) => s.id)).toEqual([ids[4]]);
    expect((await list({ search: 'pulse', status: 'active' })).data?.data).toEqual([]);
  });
});
