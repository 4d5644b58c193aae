/**
 * Analytics `segmentBy=managerTree`: a manager's whole organization, direct reports and sub-organizations, through
 * real HTTP — the anonymity threshold and the subtraction guard across rows that overlap (a suppressed sub-team is
 * never "the organization minus the other rows", nor "the whole minus the organization"), and the chains as they
 * were when each response was stored (a move afterwards changes no row of that survey).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { startTestService } from '../helpers/service.js';
import { answer, ids, launched, person, tenantWithRaisedLimits, tree, type Client } from './fixtures.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/** M with six direct reports D1..D6; D1 leads a team of four (E1..E4); five people outside M's organization. */
async function organization(client: Client) {
  await person(client, 'M', null);
  for (const id of ids('D', 6)) await person(client, id, 'M');
  for (const id of ids('E', 4)) await person(client, id, 'D1');
  for (const id of ids('OUT', 5)) await person(client, id, null);
}

describe('analytics by manager tree', () => {
  it('a sub-team of 4 under a manager of 10 is not revealed as the organization minus the direct reports', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    await organization(client);
    const surveyId = await launched(client);
    for (const [i, id] of ['M', ...ids('D', 6), ...ids('E', 4), ...ids('OUT', 5)].entries())
      await answer(client, surveyId, id, i % 11);
    const result = await tree(client, surveyId, 'M');
    expect(result.whole).toBe(16);
    // The organization (10) is shown: the rest of the survey (M and five others) is 6, not a handful.
    // The direct reports (6) alone are above the threshold, but the organization minus them would be D1's team
    // of 4, so the guard hides them too.
    expect(result.rows).toEqual([
      { group: 'organization', value: 'M', responseCount: 10, suppressed: false },
      { group: 'directReports', value: 'M', responseCount: null, suppressed: true },
      { group: 'subOrganization', value: 'D1', responseCount: null, suppressed: true },
    ]);

    // With a second team of 5 (under D2), the guard hides that one instead, the smallest shown part: 4 + 5
    // hidden together, the direct reports shown.
    for (const id of ids('F', 5)) await person(client, id, 'D2');
    const second = await launched(client);
    for (const [i, id] of ['M', ...ids('D', 6), ...ids('E', 4), ...ids('F', 5), ...ids('OUT', 5)].entries())
      await answer(client, second, id, i % 11);
    expect((await tree(client, second, 'M')).rows).toEqual([
      { group: 'organization', value: 'M', responseCount: 15, suppressed: false },
      { group: 'directReports', value: 'M', responseCount: 6, suppressed: false },
      { group: 'subOrganization', value: 'D1', responseCount: null, suppressed: true },
      { group: 'subOrganization', value: 'D2', responseCount: null, suppressed: true },
    ]);
    // D1's own tree: their team of 4 is under the threshold everywhere.
    expect((await tree(client, second, 'D1')).rows).toEqual([
      { group: 'organization', value: 'D1', responseCount: null, suppressed: true },
      { group: 'directReports', value: 'D1', responseCount: null, suppressed: true },
    ]);
  });

  it('gives number questions their figures per row, from the answers of that row only', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    await organization(client);
    for (const id of ids('F', 5)) await person(client, id, 'D2');
    const survey = await client.unwrap(
      client.POST('/api/v1/surveys', {
        body: { title: 'Pulse', questions: [{ id: 'years', type: 'number', text: 'Years here?', integer: true }] },
      }),
    );
    await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
    // Years: D1..D6 answer 1..6, E1..E4 answer 10, F1..F5 answer 20; outside the organization 100.
    const years: Array<[string, number]> = [
      ...ids('D', 6).map((id, i): [string, number] => [id, i + 1]),
      ...ids('E', 4).map((id): [string, number] => [id, 10]),
      ...ids('F', 5).map((id): [string, number] => [id, 20]),
      ...ids('OUT', 5).map((id): [string, number] => [id, 100]),
    ];
    for (const [respondentExternalId, value] of years)
      await client.unwrap(
        client.POST('/api/v1/surveys/{id}/responses', {
          params: { path: { id: survey.id } },
          body: { respondentExternalId, answers: [{ questionId: 'years', value }] },
        }),
      );
    const result = await client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/static', {
        params: { path: { id: survey.id }, query: { segmentBy: 'managerTree', manager: 'M' } },
      }),
    );
    const figures = (index: number) => result.segments[index]!.questions?.[0];
    // The whole survey: 20 answers.
    expect(result.questions[0]).toMatchObject({ answeredCount: 20, min: 1, max: 100 });
    // M's organization: 15 answers (D, E, F), mean (21 + 40 + 100) / 15.
    expect(figures(0)).toMatchObject({ type: 'number', answeredCount: 15, min: 1, max: 20, mean: 10.7333 });
    // The direct reports: D1..D6.
    expect(figures(1)).toMatchObject({ answeredCount: 6, min: 1, max: 6, mean: 3.5 });
    // Suppressed rows carry no figures.
    expect(result.segments.filter((s) => s.suppressed).every((s) => s.questions === null)).toBe(true);
  });

  it('hides the organization when the rest of the survey is a handful (the manager alone), and guards the parts', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    await organization(client);
    for (const id of ids('F', 5)) await person(client, id, 'D2');
    const surveyId = await launched(client);
    // Only M and their organization (15) answer: whole − organization would be M's answer.
    for (const [i, id] of ['M', ...ids('D', 6), ...ids('E', 4), ...ids('F', 5)].entries())
      await answer(client, surveyId, id, i % 11);
    const result = await tree(client, surveyId, 'M');
    expect(result.whole).toBe(16);
    expect(result.rows[0]).toEqual({ group: 'organization', value: 'M', responseCount: null, suppressed: true });
    // M (1) and D1's team (4) are hidden together (5): every shown part leaves at least 5 unaccounted for.
    const shown = result.rows.filter((row) => !row.suppressed).reduce((sum, row) => sum + row.responseCount!, 0);
    expect(result.whole - shown).toBeGreaterThanOrEqual(5);
    expect(result.rows.find((row) => row.value === 'D1')).toMatchObject({ suppressed: true });
  });

  it('keeps each answer where its chain was when it was stored: a move afterwards changes no row', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    await organization(client);
    for (const id of ids('F', 5)) await person(client, id, 'D2');
    const surveyId = await launched(client);
    for (const [i, id] of ['M', ...ids('D', 6), ...ids('E', 4), ...ids('F', 5), ...ids('OUT', 5)].entries())
      await answer(client, surveyId, id, i % 11);
    const before = await tree(client, surveyId, 'M');
    const beforeOut = await tree(client, surveyId, 'OUT1');
    // D2 and their team move under OUT1; M's team loses five, OUT1 gains six.
    await person(client, 'D2', 'OUT1');
    expect(await tree(client, surveyId, 'M')).toEqual(before);
    expect(await tree(client, surveyId, 'OUT1')).toEqual(beforeOut);
    expect(beforeOut.rows[0]).toMatchObject({ group: 'organization', responseCount: null, suppressed: true });
    // A survey after the move sees the new chains.
    const later = await launched(client);
    for (const [i, id] of ['M', ...ids('D', 6), ...ids('E', 4), ...ids('F', 5), ...ids('OUT', 5)].entries())
      await answer(client, later, id, i % 11);
    expect((await tree(client, later, 'OUT1')).rows.slice(0, 2)).toEqual([
      { group: 'organization', value: 'OUT1', responseCount: 6, suppressed: false },
      { group: 'directReports', value: 'OUT1', responseCount: null, suppressed: true },
    ]);
    expect((await tree(client, later, 'M')).rows[0]).toMatchObject({ responseCount: 9 }); // D2's five are gone with D2
  });

  it('smart analytics show the same rows, with the same suppression, as segments and heatmap rows', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    await organization(client);
    for (const id of ids('F', 5)) await person(client, id, 'D2');
    const surveyId = await launched(client);
    const everyone = ['M', ...ids('D', 6), ...ids('E', 4), ...ids('F', 5), ...ids('OUT', 5)];
    for (const [i, id] of everyone.entries()) await answer(client, surveyId, id, i % 11);
    const smart = await client.analytics.smart(surveyId, { segmentBy: 'managerTree', manager: 'M' });
    const expected = (await tree(client, surveyId, 'M')).rows;
    expect(expected.filter((row) => row.suppressed)).toHaveLength(2);
    expect(smart.segmentBy).toBe('managerTree');
    expect(smart.responseCount).toBe(everyone.length);
    expect(
      smart.segments.map((s) => ({
        group: s.managerTreeGroup,
        value: s.value,
        responseCount: s.responseCount,
        suppressed: s.suppressed,
      })),
    ).toEqual(expected);
    // Shown rows carry their scores, hidden ones none: the direct reports D1..D6 answered 1..6.
    const direct = smart.segments.find((s) => s.managerTreeGroup === 'directReports')!;
    expect(direct.nps).toBe(-100);
    for (const hidden of smart.segments.filter((s) => s.suppressed)) expect(hidden.nps).toBeNull();
    expect(smart.heatmap.rows.map((row) => [row.managerTreeGroup, row.value, row.suppressed])).toEqual(
      expected.map((row) => [row.group, row.value, row.suppressed]),
    );
    // Participation has no tree rows (segments are for the field breakdowns).
    expect(smart.participation.segments).toEqual([]);
    // A field breakdown carries no managerTreeGroup.
    const byField = await client.analytics.smart(surveyId, { segmentBy: 'managerId' });
    expect(byField.segments.every((s) => s.managerTreeGroup === undefined)).toBe(true);
  });

  it('needs manager with managerTree, and only with it (400 at /query/manager)', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    const surveyId = await launched(client);
    for (const path of ['/api/v1/surveys/{id}/analytics/static', '/api/v1/surveys/{id}/analytics/smart'] as const)
      for (const query of [{ segmentBy: 'managerTree' }, { segmentBy: 'department', manager: 'M' }, { manager: 'M' }]) {
        const refused = await client.GET(path, { params: { path: { id: surveyId }, query: query as never } });
        expect(refused.response.status, `${path} ${JSON.stringify(query)}`).toBe(400);
        expect(refused.error!.error.details![0]!.path).toBe('/query/manager');
      }
  });
});
