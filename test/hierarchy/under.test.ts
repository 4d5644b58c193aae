/**
 * Targeting `under`: everyone whose chain of managers contains a person, at any depth, through real HTTP — exact
 * after every PUT, sync and deletion, combined with other filters, in a preview and in a send; and cycles of
 * managers refused where they would be created (PUT, every sync mode, a dry run), while a cycle written by SQL
 * ends the walks instead of hanging them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { TestService } from '../helpers/service.js';
import { startTestService } from '../helpers/service.js';
import { waitForStatus } from '../distributions/fixtures.js';
import { below, launched, person, preview, put, sync, tenantWithRaisedLimits, under, type Client } from './fixtures.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/**
 *        CEO
 *      /     \
 *    VP1      VP2
 *   /   \       \
 *  M1    M2      M3
 *  |  \   |
 *  A1 A2  B1
 */
const chart: [string, string | null][] = [
  ['CEO', null],
  ['VP1', 'CEO'],
  ['VP2', 'CEO'],
  ['M1', 'VP1'],
  ['M2', 'VP1'],
  ['M3', 'VP2'],
  ['A1', 'M1'],
  ['A2', 'M1'],
  ['B1', 'M2'],
];

async function seeded(): Promise<{ client: Client; surveyId: string; organizationId: string }> {
  const tenant = await tenantWithRaisedLimits(t);
  // Reports before their managers: a managerId may name someone who arrives later.
  for (const [id, manager] of [...chart].reverse()) await person(tenant.live, id, manager, { location: 'London' });
  return { client: tenant.live, surveyId: await launched(tenant.live), organizationId: tenant.organizationId };
}

describe('targeting under', () => {
  it('selects the whole organization below a person at any depth, not the person', async () => {
    const { client, surveyId } = await seeded();
    const managers = new Map(chart);
    for (const [id] of chart) {
      const expected = below(managers, id);
      expect(await preview(client, surveyId, [under(id)]), id).toEqual({ count: expected.length, ids: expected });
    }
    expect(await preview(client, surveyId, [under('VP1')])).toEqual({
      count: 5,
      ids: ['A1', 'A2', 'B1', 'M1', 'M2'],
    });
    // Nobody is under a person who manages nobody, or who does not exist.
    expect(await preview(client, surveyId, [under('A1')])).toEqual({ count: 0, ids: [] });
    expect(await preview(client, surveyId, [under('NOBODY')])).toEqual({ count: 0, ids: [] });
  });

  it('combines with other filters under AND and OR', async () => {
    const { client, surveyId } = await seeded();
    await person(client, 'A2', 'M1', { location: 'Paris' });
    await person(client, 'M3', 'VP2', { location: 'Paris' });
    expect(
      await preview(client, surveyId, [under('VP1'), { field: 'location', operator: 'equals', value: 'Paris' }]),
    ).toEqual({ count: 1, ids: ['A2'] });
    expect(
      await preview(client, surveyId, [under('M2'), { field: 'location', operator: 'equals', value: 'Paris' }], 'OR'),
    ).toEqual({ count: 3, ids: ['A2', 'B1', 'M3'] });
    // Two `under` filters: the intersection of two organizations.
    expect(await preview(client, surveyId, [under('CEO'), under('M1')])).toEqual({ count: 2, ids: ['A1', 'A2'] });
  });

  it('is exact at once after a PUT that moves someone, a sync, and a deletion', async () => {
    const { client, surveyId } = await seeded();
    // M2 (with B1) moves from VP1 to VP2.
    await person(client, 'M2', 'VP2');
    expect((await preview(client, surveyId, [under('VP1')])).ids).toEqual(['A1', 'A2', 'M1']);
    expect((await preview(client, surveyId, [under('VP2')])).ids).toEqual(['B1', 'M2', 'M3']);
    // A sync moves M1's team under M3.
    const job = await sync(client, 'upsert', [{ externalId: 'M1', email: 'm1@example.com', managerId: 'M3' }]);
    expect(job.stats.updated).toBe(1);
    expect((await preview(client, surveyId, [under('VP1')])).ids).toEqual([]);
    expect((await preview(client, surveyId, [under('VP2')])).ids).toEqual(['A1', 'A2', 'B1', 'M1', 'M2', 'M3']);
    // Deleting M3 ends the chains of M1's team at M3: they are no longer under VP2, still under M3's id.
    await client.unwrap(client.DELETE('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'M3' } } }));
    expect((await preview(client, surveyId, [under('VP2')])).ids).toEqual(['B1', 'M2']);
    expect((await preview(client, surveyId, [under('M3')])).ids).toEqual(['A1', 'A2', 'M1']);
    // M3 comes back under VP1: the chains resolve through them again.
    await person(client, 'M3', 'VP1');
    expect((await preview(client, surveyId, [under('VP1')])).ids).toEqual(['A1', 'A2', 'M1', 'M3']);
  });

  it('sends to exactly the organization', async () => {
    const { client, surveyId } = await seeded();
    const sent = await client.unwrap(
      client.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [under('VP1') as never] }, distribution: { method: 'link' } },
      }),
    );
    const done = await waitForStatus(client, surveyId, sent.id, ['sent']);
    expect(done.matchedCount).toBe(5);
  });

  it('refuses under on another field, a non-string value, and in analytics filters, naming the filter', async () => {
    const { client, surveyId } = await seeded();
    const wrong = await client.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      params: { path: { surveyId } },
      body: {
        targeting: {
          filters: [
            { field: 'department', operator: 'under', value: 'X' },
            { ...under('X'), value: 3 },
          ] as never,
        },
      },
    });
    expect(wrong.response.status).toBe(400);
    expect(wrong.error!.error.details!.map((d) => d.path)).toEqual([
      '/body/targeting/filters/0/operator',
      '/body/targeting/filters/1/value',
    ]);
    const analytics = await client.GET('/api/v1/surveys/{id}/analytics/static', {
      params: { path: { id: surveyId }, query: { filters: JSON.stringify({ filters: [under('VP1')] }) } },
    });
    expect(analytics.response.status).toBe(400);
    expect(analytics.error!.error.details![0]!.path).toBe('/query/filters/filters/0/operator');
  });
});

describe('cycles of managers', () => {
  it('a PUT that would close a cycle is 400 manager_cycle at /body/managerId, and nothing is written', async () => {
    const { client, surveyId } = await seeded();
    for (const [id, manager] of [
      ['CEO', 'A1'],
      ['VP1', 'M1'],
      ['M1', 'A1'],
    ] as const) {
      const refused = await put(client, id, manager);
      expect(refused.response.status, id).toBe(400);
      expect(refused.error!.error.code).toBe('manager_cycle');
      expect(refused.error!.error.details).toEqual([
        expect.objectContaining({ path: '/body/managerId', code: 'manager_cycle' }),
      ]);
      expect(refused.error!.error.message).toContain(`${id} their own manager`);
    }
    expect(
      (await client.unwrap(client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'CEO' } } })))
        .managerId,
    ).toBeNull();
    expect((await preview(client, surveyId, [under('CEO')])).count).toBe(8);
    // Not a cycle: a manager moving within another branch, or under someone who does not exist yet.
    await person(client, 'M1', 'VP2');
    await person(client, 'CEO', 'BOARD');
  });

  it('a cycle that only a later record of a sync would close is that record error; the rest of the sync applies', async () => {
    const { client, surveyId } = await seeded();
    const job = await sync(client, 'upsert', [
      { externalId: 'N1', email: 'n1@example.com', managerId: 'N2' },
      { externalId: 'N2', email: 'n2@example.com', managerId: 'N1' },
      { externalId: 'CEO', email: 'ceo@example.com', managerId: 'B1' },
      { externalId: 'X1', email: 'x1@example.com', managerId: 'CEO' },
      // A manager removed earlier in the same sync is not part of a cycle later.
      { externalId: 'VP2', email: 'vp2@example.com', managerId: null },
      { externalId: 'M3', email: 'm3@example.com', managerId: 'VP2' },
    ]);
    expect(job.status).toBe('completed');
    expect(job.stats).toMatchObject({ created: 2, errors: 2 });
    expect(job.errors).toEqual([
      expect.objectContaining({ index: 1, externalId: 'N2', code: 'manager_cycle', path: '/managerId' }),
      expect.objectContaining({ index: 2, externalId: 'CEO', code: 'manager_cycle', path: '/managerId' }),
    ]);
    expect((await preview(client, surveyId, [under('N2')])).ids).toEqual(['N1']);
    expect((await preview(client, surveyId, [under('CEO')])).ids).toContain('X1');
    expect((await preview(client, surveyId, [under('CEO')])).ids).not.toContain('VP2');

    // The same in a dry run (nothing written) and in a replace (one transaction; the refused record is not kept).
    const dry = await sync(client, 'upsert', [{ externalId: 'VP1', email: 'vp1@example.com', managerId: 'A2' }], true);
    expect(dry.errors).toEqual([expect.objectContaining({ index: 0, code: 'manager_cycle' })]);
    const replace = await sync(
      client,
      'replace',
      chart.map(([id, manager]) => ({
        externalId: id,
        email: `${id.toLowerCase()}@example.com`,
        managerId: id === 'VP2' ? 'M3' : manager,
      })),
    );
    expect(replace.status).toBe('completed');
    expect(replace.errors).toEqual([expect.objectContaining({ externalId: 'VP2', code: 'manager_cycle' })]);
  });

  it('two concurrent PUTs that would each close half of one cycle: exactly one is refused', async () => {
    const { client } = await seeded();
    for (let round = 0; round < 5; round++) {
      const [a, b] = [`P${round}`, `Q${round}`];
      await person(client, a, null);
      await person(client, b, null);
      const results = await Promise.all([put(client, a, b), put(client, b, a)]);
      expect(results.map((r) => r.response.status).sort()).toEqual([200, 400]);
    }
  });

  it('a cycle written by SQL is walked once, never looped on: previews answer, and a write stays refused', async () => {
    const { client, surveyId, organizationId } = await seeded();
    await person(client, 'C1', null);
    await person(client, 'C2', 'C1');
    await person(client, 'C3', 'C2');
    expect((await put(client, 'C1', 'C3')).error?.error.code).toBe('manager_cycle');
    await sql`update respondents set manager_id = 'C3' where organization_id = ${organizationId} and external_id = 'C1'`.execute(
      t.db,
    );
    // C1 → C3 → C2 → C1 … : C2 and C3 are under C1; C1 itself is left out though the cycle leads back to it.
    expect(await preview(client, surveyId, [under('C1')])).toEqual({ count: 2, ids: ['C2', 'C3'] });
    expect(await preview(client, surveyId, [under('C3')])).toEqual({ count: 2, ids: ['C1', 'C2'] });
    // Someone joining under the cycle is accepted (they close none); a member's manager change is checked.
    await person(client, 'C4', 'C2');
    expect((await put(client, 'C2', 'C4')).error?.error.code).toBe('manager_cycle');
  });
});
