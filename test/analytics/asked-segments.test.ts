/**
 * Segments are fixed when a person is asked, whatever the channel: an integrator renders the survey in its own
 * HR portal and submits through the API with `respondentExternalId`, for people a distribution reached; people
 * then move department. Every report keeps each answer where its person was when asked, counts it under the
 * distribution it answers, and suppresses the groups as they were — over real HTTP, static and smart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { startTestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { waitForStatus } from '../distributions/fixtures.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  t.service.deps.config.publicBaseUrl = t.url;
});
afterAll(async () => {
  await t?.close();
});

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

async function person(client: Client, externalId: string, department: string) {
  const put = await client.PUT('/api/v1/respondents/{externalId}', {
    params: { path: { externalId } },
    body: { email: `${externalId.toLowerCase()}@example.com`, department },
  });
  expect(put.response.status).toBeLessThan(300);
}

async function launched(client: Client): Promise<string> {
  const survey = await client.unwrap(
    client.POST('/api/v1/surveys', {
      body: { title: 'Pulse', questions: [{ id: 'nps', type: 'nps', text: 'Recommend us?' }] },
    }),
  );
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  return survey.id;
}

const answer = (client: Client, surveyId: string, respondentExternalId: string, value: number) =>
  client.unwrap(
    client.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: { respondentExternalId, answers: [{ questionId: 'nps', value }] },
    }),
  );

const byDepartment = async (client: Client, surveyId: string, query: Record<string, string> = {}) => {
  const result = await client.unwrap(
    client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { segmentBy: 'department', ...query } },
    }),
  );
  return new Map(result.segments.map((s) => [s.value, s]));
};

describe('segments as asked', () => {
  it('API answers for people a distribution reached count under its snapshot and its id; later moves change nothing', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    const sales = Array.from({ length: 8 }, (_, i) => `S-${i}`);
    const legal = Array.from({ length: 4 }, (_, i) => `L-${i}`);
    const engineering = Array.from({ length: 6 }, (_, i) => `E-${i}`);
    for (const id of engineering) await person(client, id, 'Engineering');
    for (const id of sales) await person(client, id, 'Sales');
    for (const id of legal) await person(client, id, 'Legal');
    const surveyId = await launched(client);
    const sent = await client.unwrap(
      client.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'link' } },
      }),
    );
    await waitForStatus(client, surveyId, sent.id, ['sent']);

    // After the send, three people move from Sales to Legal; then everyone answers in the company's own portal.
    for (const id of sales.slice(0, 3)) await person(client, id, 'Legal');
    for (const [i, id] of [...sales, ...legal, ...engineering].entries())
      expect((await answer(client, surveyId, id, i % 11)).distributionId).toBe(sent.id);

    const groups = await byDepartment(client, surveyId);
    expect(groups.get('Sales')).toMatchObject({ responseCount: 8, suppressed: false });
    // A Legal of 4 when asked stays under the threshold of 5: no figure (and Engineering, the next smallest, is
    // hidden with it so that Legal is not the total minus the rest).
    expect(groups.get('Legal')).toMatchObject({ suppressed: true, responseCount: null });
    expect(groups.get('Engineering')).toMatchObject({ suppressed: true, responseCount: null });

    // Filtered by the distribution, every one of its 18 recipients' answers counts.
    const narrowed = await client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/static', {
        params: { path: { id: surveyId }, query: { distributionId: sent.id } },
      }),
    );
    expect(narrowed.responseCount).toBe(18);

    // Smart analytics apply the same rule.
    const smart = await client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/smart', {
        params: { path: { id: surveyId }, query: { segmentBy: 'department' } },
      }),
    );
    const smartGroups = new Map(smart.segments.map((segment) => [segment.value, segment]));
    expect(smartGroups.get('Sales')).toMatchObject({ responseCount: 8, suppressed: false });
    expect(smartGroups.get('Legal')).toMatchObject({ suppressed: true, responseCount: null });
    expect(new Map(smart.heatmap.rows.map((row) => [row.value, row.suppressed]))).toEqual(
      new Map([
        ['Sales', false],
        ['Legal', true],
        ['Engineering', true],
      ]),
    );
    // Participation by the distribution's snapshot: everyone it reached answered.
    expect(smart.participation).toMatchObject({ invited: 18, responded: 18 });

    // Everyone moves again: no report changes.
    for (const id of sales) await person(client, id, 'Marketing');
    expect(await byDepartment(client, surveyId)).toEqual(groups);
  });

  it('an answer without a distribution keeps the fields its person had when answering', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    const people = Array.from({ length: 6 }, (_, i) => `P-${i}`);
    for (const id of people) await person(client, id, 'Support');
    const surveyId = await launched(client);
    for (const [i, id] of people.entries())
      expect((await answer(client, surveyId, id, 10 - i)).distributionId).toBeNull();
    const before = await byDepartment(client, surveyId);
    expect(before.get('Support')).toMatchObject({ responseCount: 6, suppressed: false });
    for (const id of people) await person(client, id, 'Finance');
    expect(await byDepartment(client, surveyId)).toEqual(before);
    // Filters read the same fields: the answers were given in Support.
    const filtered = await client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/static', {
        params: {
          path: { id: surveyId },
          query: {
            filters: JSON.stringify({ filters: [{ field: 'department', operator: 'equals', value: 'Support' }] }),
          },
        },
      }),
    );
    expect(filtered.responseCount).toBe(6);
  });
});
