/**
 * Property tests of the anonymity rules: on their own (any group sizes, any threshold), and end to end —
 * no combination of breakdown, filter and time window reveals a group under the threshold, and no
 * suppressed group can be worked out as the total minus the shown groups.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { round } from '../../server/src/modules/analytics/statistics.js';
import { suppressedGroups } from '../../server/src/modules/analytics/suppression.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { generate, type Generated } from './fixtures.js';

describe('suppressedGroups', () => {
  it('never shows a small group, and never leaves the hidden ones computable by subtraction', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 25 }),
        fc.integer({ min: 3, max: 12 }),
        (sizes, threshold) => {
          const hidden = suppressedGroups(
            sizes.map((respondents) => ({ respondents })),
            threshold,
          );
          const shown = sizes.filter((_, i) => !hidden.has(i));
          expect(shown.every((size) => size >= threshold)).toBe(true);
          const hiddenTotal = sizes.filter((_, i) => hidden.has(i)).reduce((s, n) => s + n, 0);
          // Either nothing is hidden, or the hidden groups together are at least the threshold (or everything is
          // hidden).
          expect(hidden.size === 0 || hiddenTotal >= threshold || shown.length === 0).toBe(true);
          // Only what the rules need: without small groups nothing is hidden.
          if (sizes.every((size) => size >= threshold)) expect(hidden.size).toBe(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('hides the next smallest group when one small group stands alone', () => {
    expect(
      [
        ...suppressedGroups([{ respondents: 40 }, { respondents: 7 }, { respondents: 2 }, { respondents: 9 }], 5),
      ].sort(),
    ).toEqual([1, 2]);
    expect([...suppressedGroups([{ respondents: 40 }, { respondents: 3 }, { respondents: 2 }], 5)].sort()).toEqual([
      1, 2,
    ]);
    expect([...suppressedGroups([{ respondents: 3 }], 5)]).toEqual([0]);
  });

  it('breaks ties between equally small groups by value, whatever order the groups come in', () => {
    const groups = [
      { respondents: 40, value: 'Sales' },
      { respondents: 2, value: 'Legal' },
      { respondents: 6, value: 'Ops' },
      { respondents: 6, value: 'Finance' },
    ];
    const hiddenValues = (order: typeof groups) => [...suppressedGroups(order, 5)].map((i) => order[i]!.value).sort();
    // Legal alone (2) would be the total minus the rest: one of the two groups of 6 goes with it — always Finance.
    expect(hiddenValues(groups)).toEqual(['Finance', 'Legal']);
    expect(hiddenValues([...groups].reverse())).toEqual(['Finance', 'Legal']);
  });
});

describe('round', () => {
  it('rounds half away from zero, negative figures as positive ones', () => {
    expect([round(93.75, 1), round(-93.75, 1), round(-0.04, 1), round(2.5, 0), round(-2.5, 0)]).toEqual([
      93.8, -93.8, 0, 3, -3,
    ]);
    expect(Object.is(round(-0.04, 1), -0)).toBe(false);
  });
});

let t: TestService;
let client: ReturnType<TestService['client']>;
let data: Generated;

beforeAll(async () => {
  t = await startTestService();
  const tenant = await t.createTenant('BUSINESS');
  client = t.client(tenant.liveKey);
  data = await generate(t, client, tenant.organizationId, 5, 3);
});
afterAll(async () => {
  await t?.close();
});

const locationOf = (i: number) => (i % 2 === 0 ? 'Paris' : 'Berlin');

describe('analytics never reveal a small group', () => {
  it('for any breakdown, filter and window (static and smart)', async () => {
    const people = [...data.department.keys()];
    const index = new Map(people.map((id, i) => [id, i]));
    const filters = fc.constantFrom(
      undefined,
      { filters: [{ field: 'department', operator: 'equals', value: 'People' }] },
      { filters: [{ field: 'department', operator: 'in', value: ['Legal', 'Finance'] }] },
      { filters: [{ field: 'location', operator: 'equals', value: 'Paris' }] },
      {
        filters: [
          { field: 'department', operator: 'equals', value: 'Engineering' },
          { field: 'location', operator: 'equals', value: 'Berlin' },
        ],
        logic: 'AND',
      },
      { filters: [{ field: 'attributes.level', operator: 'equals', value: 'L1' }] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('department', 'location', 'tenure', 'attributes.level', 'employmentType'),
        filters,
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 3, max: 12 }),
        async (segmentBy, filter, startDay, days, threshold) => {
          await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: threshold } });
          const after = new Date(Date.UTC(2026, 9, 1 + startDay));
          const before = new Date(after.getTime() + days * 86_400_000);
          const query = {
            segmentBy,
            submittedAfter: after.toISOString(),
            submittedBefore: before.toISOString(),
            ...(filter ? { filters: JSON.stringify(filter) } : {}),
          };
          // The respondents that really are in scope, computed here from the generated data.
          const matches = (respondent: string | null) => {
            if (!filter) return true;
            if (!respondent) return false;
            const i = index.get(respondent)!;
            const fields: Record<string, unknown> = {
              department: data.department.get(respondent),
              location: locationOf(i),
              'attributes.level': `L${i % 3}`,
            };
            const results = filter.filters.map((f) =>
              f.operator === 'in'
                ? (f.value as readonly string[]).includes(fields[f.field] as string)
                : fields[f.field] === f.value,
            );
            return results.every(Boolean);
          };
          const inScope = data.responses.filter(
            (r) => r.submittedAt >= after && r.submittedAt < before && matches(r.respondent),
          );
          const stat = await client.GET('/api/v1/surveys/{id}/analytics/static', {
            params: { path: { id: data.surveyId }, query: query as never },
          });
          const smart = await client.GET('/api/v1/surveys/{id}/analytics/smart', {
            params: { path: { id: data.surveyId }, query: query as never },
          });
          expect(stat.response.status).toBe(200);
          expect(smart.response.status).toBe(200);
          const s = stat.data!.data;
          const m = smart.data!.data;
          if (inScope.length < threshold) {
            expect(s).toMatchObject({ suppressed: true, suppressionReason: 'threshold', questions: [] });
            expect(m).toMatchObject({ suppressed: true, suppressionReason: 'threshold', segments: [] });
            return;
          }
          // Both pass the audit of released results too: withheld, a result says so and shows nothing.
          const breakdowns: { suppressed: boolean; responseCount: number | null }[][] = [];
          for (const [result, segments] of [
            [s, s.segments],
            [m, m.segments],
          ] as const) {
            if (result.suppressed) expect(result).toMatchObject({ suppressionReason: 'released_overlap' });
            else {
              expect(result.responseCount).toBe(inScope.length);
              breakdowns.push(segments);
            }
          }
          for (const segments of breakdowns) {
            const shown = segments.filter((g) => !g.suppressed);
            expect(shown.every((g) => (g.responseCount ?? 0) >= threshold)).toBe(true);
            const hiddenTotal = inScope.length - shown.reduce((sum, g) => sum + g.responseCount!, 0);
            expect(hiddenTotal === 0 || hiddenTotal >= threshold).toBe(true);
          }
          expect(m.heatmap.rows.filter((row) => row.suppressed).map((row) => row.value)).toEqual(
            m.segments.filter((g) => g.suppressed).map((g) => g.value),
          );
          expect(
            m.heatmap.rows
              .filter((row) => row.suppressed)
              .every((row) => row.cells.every((cell) => cell.score === null && cell.difference === null)),
          ).toBe(true);
        },
      ),
      { numRuns: 30 },
    );
    await client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 5 } });
  });
});
