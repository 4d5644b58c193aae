/**
 * The top of the tree marked as HR systems mark it: a `managerId` equal to the person's own `externalId`. Through
 * real HTTP, such a record is accepted by PUT, every sync mode and SCIM, reads back as given, and counts as "no
 * manager" for `under` (previews and sends), the analytics manager tree and the cycle checks; cycles of two or
 * three people stay refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { startTestService } from '../helpers/service.js';
import { allRecipients, waitForStatus } from '../distributions/fixtures.js';
import { enterprise, patchOp, scimTenant, user } from '../scim/scim-helpers.js';
import {
  answer,
  below,
  ids,
  launched,
  person,
  preview,
  put,
  sync,
  tenantWithRaisedLimits,
  tree,
  under,
  type Client,
} from './fixtures.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/** CEO (their own manager) with six direct reports D1..D6; D1 leads E1..E5; X1..X5 have no manager. */
const chart: [string, string | null][] = [
  ['CEO', 'CEO'],
  ...ids('D', 6).map((id): [string, string] => [id, 'CEO']),
  ...ids('E', 5).map((id): [string, string] => [id, 'D1']),
  ...ids('X', 5).map((id): [string, null] => [id, null]),
];
const organization = chart.filter(([id]) => id !== 'CEO' && !id.startsWith('X')).map(([id]) => id);

const managerIdOf = async (client: Client, externalId: string) =>
  (await client.unwrap(client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId } } }))).managerId;

async function refusedAsCycle(client: Client, externalId: string, managerId: string) {
  const refused = await put(client, externalId, managerId);
  expect(refused.response.status, `${externalId} → ${managerId}`).toBe(400);
  expect(refused.error!.error.code).toBe('manager_cycle');
}

describe('own manager = top of the tree', () => {
  it('a PUT is stored as given; under the CEO is everyone below, in a preview and in a send', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    // The CEO first and last: a self-reference on a new record and on a stored one.
    await person(client, 'CEO', 'CEO');
    for (const [id, manager] of chart) await person(client, id, manager);
    expect(await managerIdOf(client, 'CEO')).toBe('CEO');
    const surveyId = await launched(client);

    // A preview shows at most ten; the send below lists everyone.
    expect((await preview(client, surveyId, [under('CEO')])).count).toBe(organization.length);
    const managers = new Map(chart);
    for (const id of ['CEO', 'D1', 'D2', 'E1'])
      expect((await preview(client, surveyId, [under(id)])).count, id).toBe(below(managers, id).length);
    expect((await preview(client, surveyId, [under('D1')])).ids).toEqual(ids('E', 5));

    const sent = await client.unwrap(
      client.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [under('CEO') as never] }, distribution: { method: 'link' } },
      }),
    );
    const done = await waitForStatus(client, surveyId, sent.id, ['sent']);
    expect(done.matchedCount).toBe(organization.length);
    const recipients = await allRecipients(client, surveyId, sent.id);
    expect(recipients.map((r) => r.respondentExternalId).sort()).toEqual([...organization].sort());
    expect(recipients.find((r) => r.respondentExternalId === 'D1')?.snapshot.managerId).toBe('CEO');
  });

  it('cycle checks read it as no manager: moves below the CEO are fine, cycles of two and three are refused', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    for (const [id, manager] of chart) await person(client, id, manager);
    const surveyId = await launched(client);
    // The CEO under someone in their organization closes a cycle; under an outsider it does not.
    await refusedAsCycle(client, 'CEO', 'E1');
    await refusedAsCycle(client, 'CEO', 'D2');
    await person(client, 'E1', 'D2');
    await person(client, 'D1', 'D1');
    expect((await preview(client, surveyId, [under('CEO')])).count).toBe(6); // D1 leads their own tree now
    await person(client, 'D1', 'CEO');
    // A cycle of two and of three, by PUT.
    await refusedAsCycle(client, 'D1', 'E2');
    await person(client, 'X2', 'X1');
    await person(client, 'X3', 'X2');
    await refusedAsCycle(client, 'X1', 'X2');
    await refusedAsCycle(client, 'X1', 'X3');
    expect(await managerIdOf(client, 'X1')).toBeNull();
    // The top of one tree moving under another.
    await person(client, 'X1', 'X1');
    await person(client, 'CEO', 'X3');
    expect((await preview(client, surveyId, [under('X1')])).count).toBe(2 + 1 + organization.length);
    await refusedAsCycle(client, 'X1', 'E3');
  });

  it('a sync stores it as given in every mode, refusing the cycles of two and three in the same records', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    const surveyId = await launched(client);
    const record = ([id, manager]: [string, string | null]) => ({
      externalId: id,
      email: `${id.toLowerCase()}@example.com`,
      managerId: manager,
    });
    const upsert = await sync(client, 'upsert', [
      ...chart.map(record),
      record(['A', 'B']),
      record(['B', 'A']),
      record(['P', 'Q']),
      record(['Q', 'R']),
      record(['R', 'P']),
    ]);
    expect(upsert.status).toBe('completed');
    expect(upsert.errors).toEqual([
      expect.objectContaining({ externalId: 'B', code: 'manager_cycle', path: '/managerId' }),
      expect.objectContaining({ externalId: 'R', code: 'manager_cycle', path: '/managerId' }),
    ]);
    expect(upsert.stats).toMatchObject({ created: chart.length + 3, errors: 2 });
    expect(await managerIdOf(client, 'CEO')).toBe('CEO');
    expect((await preview(client, surveyId, [under('CEO')])).count).toBe(organization.length);

    // A dry run, an append of a new top, and a replace that keeps the CEO as their own manager.
    const dry = await sync(client, 'upsert', [record(['D1', 'D1']), record(['CEO', 'E1'])], true);
    expect(dry.errors).toEqual([]);
    const append = await sync(client, 'append', [record(['NEW', 'NEW']), record(['N1', 'NEW'])]);
    expect(append.stats).toMatchObject({ created: 2, errors: 0 });
    expect((await preview(client, surveyId, [under('NEW')])).ids).toEqual(['N1']);
    const replace = await sync(client, 'replace', [...chart.map(record), record(['CEO', 'CEO'])]);
    expect(replace.status).toBe('completed');
    expect(replace.errors).toEqual([]);
    expect(await managerIdOf(client, 'CEO')).toBe('CEO');
    expect((await preview(client, surveyId, [under('CEO')])).count).toBe(organization.length);
  });

  it('analytics by the CEO tree cover the whole organization exactly; the CEO counts in the rest', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    for (const [id, manager] of chart) await person(client, id, manager);
    const surveyId = await launched(client);
    for (const [i, [id]] of chart.entries()) await answer(client, surveyId, id, i % 11);
    const result = await tree(client, surveyId, 'CEO');
    expect(result.whole).toBe(chart.length);
    expect(result.rows).toEqual([
      { group: 'organization', value: 'CEO', responseCount: organization.length, suppressed: false },
      { group: 'directReports', value: 'CEO', responseCount: 6, suppressed: false },
      { group: 'subOrganization', value: 'D1', responseCount: 5, suppressed: false },
    ]);
    // The same organization `under` selects; a chain through the CEO ends at the CEO.
    expect((await preview(client, surveyId, [under('CEO')])).count).toBe(result.rows[0]!.responseCount);
    expect((await tree(client, surveyId, 'D1')).rows[0]).toMatchObject({ group: 'organization', responseCount: 5 });
  });
});

describe('own manager over SCIM', () => {
  it('POST, PUT and PATCH accept a manager that is the user themselves; a cycle of two is invalidValue', async () => {
    const tenant = await scimTenant(t);
    const scim = tenant.live;
    const client = t.client(tenant.allKey);
    const ceo = await scim(
      'POST',
      '/Users',
      user('ceo', { externalId: 'S-CEO', [enterprise]: { manager: { value: 'S-CEO' } } }),
    );
    expect(ceo.status, JSON.stringify(ceo.body)).toBe(201);
    expect(ceo.body[enterprise]).toEqual({ manager: { value: 'S-CEO' } });
    const id = ceo.body.id as string;
    // A report named by the CEO's SCIM id, as identity providers do.
    const vp = await scim(
      'POST',
      '/Users',
      user('vp', { externalId: 'S-VP', [enterprise]: { manager: { value: id } } }),
    );
    expect(vp.status, JSON.stringify(vp.body)).toBe(201);
    expect(vp.body[enterprise]).toEqual({ manager: { value: 'S-CEO' } });

    // PUT naming the user's own id: the externalId is stored.
    const replaced = await scim(
      'PUT',
      `/Users/${id}`,
      user('ceo', { externalId: 'S-CEO', title: 'Chief', [enterprise]: { manager: { value: id } } }),
    );
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body[enterprise]).toEqual({ manager: { value: 'S-CEO' } });
    // PATCH: cleared, then set back to the user themselves (the bare value Entra ID sends).
    const patch = (value: unknown) =>
      scim('PATCH', `/Users/${id}`, {
        schemas: [patchOp],
        Operations: [{ op: 'replace', path: `${enterprise}:manager`, value }],
      });
    expect((await patch('')).status).toBe(200);
    expect(await managerIdOf(client, 'S-CEO')).toBeNull();
    const patched = await patch('S-CEO');
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await scim('GET', `/Users/${id}`)).body[enterprise]).toEqual({ manager: { value: 'S-CEO' } });
    expect(await managerIdOf(client, 'S-CEO')).toBe('S-CEO');

    const surveyId = await launched(client);
    expect(await preview(client, surveyId, [under('S-CEO')])).toEqual({ count: 1, ids: ['S-VP'] });
    const cycle = await patch({ value: vp.body.id });
    expect(cycle.status).toBe(400);
    expect(cycle.body.scimType).toBe('invalidValue');
    expect(await managerIdOf(client, 'S-CEO')).toBe('S-CEO');
  });
});
