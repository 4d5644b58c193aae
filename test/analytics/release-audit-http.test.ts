/**
 * The audit of released results through HTTP: the four ways two or three allowed results gave one person's answers
 * (a segment minus a manager's tree, a window minus the whole, a live result polled around one response, a segment
 * minus two filtered parts), each on a survey of its own. The result that would complete the attack is withheld
 * (`suppressionReason: released_overlap`), everything before it is shown, and asking again for what was shown is
 * always answered.
 */
import type { components } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertPeople } from '../distributions/fixtures.js';
import type { RespondentInput } from '../../server/src/modules/respondents/records.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/**
 * A tenant and a launched one-question survey; `people` answer it in order (rating 1 for the person named
 * `lonely`, 4 for everyone else), one second apart in `submittedAt` order.
 */
async function answered(people: RespondentInput[]) {
  const tenant = await tenantWithRaisedLimits(t);
  await insertPeople(t, tenant.organizationId, people);
  const client = tenant.live;
  const survey = await client.unwrap(
    client.POST('/api/v1/surveys', {
      body: { title: 'Pulse', questions: [{ id: 'q', type: 'rating', text: 'Good?' }] },
    }),
  );
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  const submit = async (person: RespondentInput) => {
    const response = await client.unwrap(
      client.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: survey.id } },
        body: {
          answers: [{ questionId: 'q', value: person.externalId === 'VP' ? 1 : 4 }],
          respondentExternalId: person.externalId,
        },
      }),
    );
    return response.submittedAt;
  };
  const times: string[] = [];
  for (const person of people) times.push(await submit(person));
  const analytics = (query: Record<string, string> = {}) =>
    client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/static', {
        params: { path: { id: survey.id }, query: query as never },
      }),
    );
  return { client, surveyId: survey.id, submit, times, analytics };
}

/** Engineering: the VP and 20 people under them (10 in Berlin, 10 in Munich); Sales: 6 people. */
function company(): RespondentInput[] {
  const person = (externalId: string, department: string, location: string, managerId: string | null) => ({
    externalId,
    email: `${externalId.toLowerCase()}@example.com`,
    department,
    location,
    managerId,
  });
  return [
    person('VP', 'Engineering', 'Paris', null),
    ...Array.from({ length: 20 }, (_, i) => person(`E-${i}`, 'Engineering', i < 10 ? 'Berlin' : 'Munich', 'VP')),
    ...Array.from({ length: 6 }, (_, i) => person(`S-${i}`, 'Sales', 'Berlin', null)),
  ];
}

const filter = (...rules: [string, string][]) =>
  JSON.stringify({ filters: rules.map(([field, value]) => ({ field, operator: 'equals', value })), logic: 'AND' });

type Static = components['schemas']['StaticAnalytics'];
const segmentOf = (result: Static, value: string | null, group?: string) =>
  result.segments.find((s) => s.value === value && (group === undefined || s.managerTreeGroup === group))!;

describe('the audit of released results', () => {
  it('a department minus the manager tree inside it: the tree one person smaller is withheld', async () => {
    const { analytics } = await answered(company());
    const byDepartment = await analytics({ segmentBy: 'department' });
    expect(segmentOf(byDepartment, 'Engineering').responseCount).toBe(21);
    const tree = await analytics({ segmentBy: 'managerTree', manager: 'VP' });
    expect(tree.suppressed).toBe(false);
    const organization = segmentOf(tree, 'VP', 'organization');
    expect(organization).toMatchObject({ suppressed: true, suppressionReason: 'released_overlap', questions: null });
    // What was shown stays available.
    expect(segmentOf(await analytics({ segmentBy: 'department' }), 'Engineering').responseCount).toBe(21);
  });

  it('a window minus the whole: the whole one response larger is withheld', async () => {
    const people = company();
    const { analytics, times } = await answered(people);
    const last = times.at(-1)!;
    const windowed = await analytics({ submittedBefore: last });
    expect(windowed.responseCount).toBe(people.length - 1);
    const whole = await analytics();
    expect(whole).toMatchObject({ suppressed: true, suppressionReason: 'released_overlap', questions: [] });
    expect((await analytics({ submittedBefore: last })).responseCount).toBe(people.length - 1);
  });

  it('a live result polled around one response moves only in steps of the threshold', async () => {
    const people = company();
    const { analytics, submit } = await answered(people.slice(0, 20));
    expect((await analytics()).responseCount).toBe(20);
    await submit(people[20]!);
    expect(await analytics()).toMatchObject({ suppressed: true, suppressionReason: 'released_overlap' });
    for (const person of people.slice(21, 25)) await submit(person);
    expect((await analytics()).responseCount).toBe(25);
  });

  it('a department minus two filtered parts of it: the last part is withheld', async () => {
    const { analytics } = await answered(company());
    expect(segmentOf(await analytics({ segmentBy: 'department' }), 'Engineering').responseCount).toBe(21);
    const berlin = await analytics({ filters: filter(['department', 'Engineering'], ['location', 'Berlin']) });
    expect(berlin.responseCount).toBe(10);
    const munich = await analytics({ filters: filter(['department', 'Engineering'], ['location', 'Munich']) });
    expect(munich).toMatchObject({ suppressed: true, suppressionReason: 'released_overlap' });
  });
});
