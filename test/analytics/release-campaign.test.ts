/**
 * A campaign against the audit of released results, through HTTP: random sequences of static analytics requests
 * (segments, filters, windows, manager trees) with submissions between them, each sequence on a survey of its own.
 * Every group a response showed figures for is worked out here from what was submitted, and an independent exact
 * solver (released-solver.ts) checks that together they never determine one response, a set smaller than the
 * threshold, or a nested pair closer than the threshold.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import { insertPeople } from '../distributions/fixtures.js';
import type { RespondentInput } from '../../server/src/modules/respondents/records.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { checkReleased } from './released-solver.js';

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
type Static = components['schemas']['StaticAnalytics'];

const threshold = 3;
/** 24 people under a CEO: M1 leads 12 (M2 among them, who leads 5 of them), the others report to the CEO. */
const people: RespondentInput[] = Array.from({ length: 24 }, (_, i) => ({
  externalId: `P${i}`,
  email: `p${i}@example.com`,
  department: ['A', 'B', 'C'][i % 3]!,
  location: i % 2 === 0 ? 'X' : 'Y',
  managerId: i === 0 ? null : i === 1 ? 'P0' : i === 2 ? 'P1' : i < 8 ? 'P2' : i < 14 ? 'P1' : 'P0',
}));
const byId = new Map(people.map((person) => [person.externalId, person]));
/** The chain of managers above a person, nearest first. */
const chainOf = (id: string): string[] => {
  const chain: string[] = [];
  for (let at = byId.get(id)?.managerId; at; at = byId.get(at)?.managerId) chain.push(at);
  return chain;
};

let t: TestService;
let client: Client;
beforeAll(async () => {
  t = await startTestService();
  const tenant = await tenantWithRaisedLimits(t);
  client = tenant.live;
  await insertPeople(t, tenant.organizationId, people);
  await client.unwrap(client.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: threshold } }));
});
afterAll(async () => {
  await t?.close();
});

type Action =
  | { kind: 'submit'; count: number }
  | {
      kind: 'ask';
      segmentBy?: 'department' | 'location' | 'managerTree';
      manager: 'P0' | 'P1' | 'P2';
      filter?: ['department' | 'location', string];
      window?: number;
    };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('submit' as const), count: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        kind: fc.constant('ask' as const),
        segmentBy: fc.constantFrom('department' as const, 'location' as const, 'managerTree' as const),
        manager: fc.constantFrom('P0' as const, 'P1' as const, 'P2' as const),
        filter: fc.constantFrom<['department' | 'location', string]>(
          ['department', 'A'],
          ['department', 'B'],
          ['location', 'X'],
        ),
        window: fc.integer({ min: 1, max: 24 }),
      },
      { requiredKeys: ['kind', 'manager'] },
    ),
  },
);

interface Answered {
  who: string;
  submittedAt: string;
}

/** The responses (indexes into `answered`) a shown group of a result covers, worked out from what was submitted. */
function groupsShown(result: Static, action: Extract<Action, { kind: 'ask' }>, answered: Answered[], before?: string) {
  const inScope = answered
    .map((response, index) => ({ ...response, index }))
    .filter((r) => before === undefined || r.submittedAt < before)
    .filter((r) => !action.filter || byId.get(r.who)![action.filter[0]] === action.filter[1]);
  const groups: Set<number>[] = [];
  if (result.suppressed) return groups;
  groups.push(new Set(inScope.map((r) => r.index)));
  for (const segment of result.segments) {
    if (segment.suppressed) continue;
    const members = inScope.filter((r) => {
      if (action.segmentBy !== 'managerTree') return byId.get(r.who)![action.segmentBy!] === segment.value;
      const chain = chainOf(r.who);
      const at = chain.indexOf(action.manager);
      if (segment.managerTreeGroup === 'organization') return at >= 0;
      if (segment.managerTreeGroup === 'directReports') return at === 0;
      return at > 0 && chain[at - 1] === segment.value;
    });
    expect(members.length, `${JSON.stringify(action)} ${segment.value}`).toBe(segment.responseCount);
    groups.push(new Set(members.map((r) => r.index)));
  }
  return groups;
}

describe('the audit of released results, campaigned through HTTP', () => {
  it('no sequence of requests and submissions releases groups that determine a response', async () => {
    let withheld = 0;
    let shown = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 6, maxLength: 14 }), async (actions) => {
        const survey = await client.unwrap(
          client.POST('/api/v1/surveys', {
            body: { title: 'Campaign', questions: [{ id: 'q', type: 'rating', text: 'Good?' }] },
          }),
        );
        await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
        const answered: Answered[] = [];
        const released: Set<number>[] = [];
        for (const action of actions) {
          if (action.kind === 'submit') {
            for (let i = 0; i < action.count && answered.length < people.length; i++) {
              const who = people[answered.length]!.externalId;
              const response = await client.unwrap(
                client.POST('/api/v1/surveys/{id}/responses', {
                  params: { path: { id: survey.id } },
                  body: { answers: [{ questionId: 'q', value: 1 + (answered.length % 5) }], respondentExternalId: who },
                }),
              );
              answered.push({ who, submittedAt: response.submittedAt });
            }
            continue;
          }
          const before = action.window === undefined ? undefined : answered[action.window]?.submittedAt;
          const query: Record<string, string> = {
            ...(action.segmentBy ? { segmentBy: action.segmentBy } : {}),
            ...(action.segmentBy === 'managerTree' ? { manager: action.manager } : {}),
            ...(action.filter
              ? {
                  filters: JSON.stringify({
                    filters: [{ field: action.filter[0], operator: 'equals', value: action.filter[1] }],
                  }),
                }
              : {}),
            ...(before ? { submittedBefore: before } : {}),
          };
          const result = await client.unwrap(
            client.GET('/api/v1/surveys/{id}/analytics/static', {
              params: { path: { id: survey.id }, query: query as never },
            }),
          );
          if (result.suppressionReason === 'released_overlap') withheld++;
          const groups = groupsShown(result, action, answered, before);
          shown += groups.length;
          released.push(...groups.filter((group) => group.size > 0));
        }
        checkReleased(released, answered.length, threshold);
      }),
      { numRuns: 12, seed: 20261129 },
    );
    // The campaign met the audit at work, and it let results through.
    expect(shown).toBeGreaterThan(0);
    expect(withheld + shown).toBeGreaterThan(0);
  }, 120_000);
});
