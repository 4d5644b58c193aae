/**
 * Generated survey data with known answers for the analytics tests: a survey of every question type, launched
 * through the API; respondents in departments of known sizes; responses written straight into `responses`
 * (the triggers keep the analytics copy, as they do for the API's inserts) with a seeded generator, and the raw
 * answers kept so that each test recomputes every figure on its own.
 */
import type { components } from '@survey-service/sdk';
import { expect } from 'vitest';
import { newId } from '../../server/src/lib/ids.js';
import type { TestService } from '../helpers/service.js';

export type Answer = components['schemas']['Answer'];
type Client = ReturnType<TestService['client']>;

/** mulberry32: small, seeded, good enough to spread answers. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const questions: components['schemas']['QuestionInput'][] = [
  { id: 'nps', type: 'nps', text: 'Recommend us?' },
  { id: 'tools', type: 'rating', text: 'I have the tools I need.', minLabel: 'No', maxLabel: 'Yes' },
  { id: 'manager', type: 'rating', text: 'My manager supports me.', minLabel: 'No', maxLabel: 'Yes', required: false },
  {
    id: 'growth',
    type: 'rating',
    text: 'I can grow here.',
    minLabel: 'No',
    maxLabel: 'Yes',
    min: 0,
    max: 10,
    required: false,
  },
  {
    id: 'where',
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: [
      { id: 'office', label: 'Office' },
      { id: 'home', label: 'Home' },
      { id: 'hybrid', label: 'Hybrid' },
    ],
  },
  {
    id: 'perks',
    type: 'multiple_choice',
    text: 'Perks?',
    required: false,
    minSelections: 1,
    maxSelections: 3,
    choices: [
      { id: 'learn', label: 'Learning' },
      { id: 'flex', label: 'Flex' },
      { id: 'health', label: 'Health' },
      { id: 'leave', label: 'Leave' },
    ],
  },
  { id: 'change', type: 'text', text: 'What should change?', required: false, maxLength: 200 },
];

export interface Generated {
  surveyId: string;
  responses: { id: string; respondent: string | null; submittedAt: Date; answers: Answer[] }[];
  department: Map<string, string>;
}

export const departments: Array<[string, number]> = [
  ['Engineering', 40],
  ['Sales', 25],
  ['People', 9],
  ['Legal', 3],
  ['Finance', 2],
];

/** A launched survey and one response per respondent of `departments`, plus `anonymous` responses without one. */
export async function generate(
  t: TestService,
  client: Client,
  organizationId: string,
  seed: number,
  anonymous = 4,
  allowMultipleResponses = true,
): Promise<Generated> {
  const created = await client.POST('/api/v1/surveys', {
    body: { title: 'Engagement', questions, settings: { allowMultipleResponses } },
  });
  expect(created.response.status).toBe(201);
  const surveyId = created.data!.data.id;
  expect(
    (await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } })).response.status,
  ).toBe(200);

  const rand = random(seed);
  const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
  const department = new Map<string, string>();
  const people: string[] = [];
  for (const [name, size] of departments) {
    for (let i = 0; i < size; i++) {
      const id = `${name.slice(0, 3).toUpperCase()}-${seed}-${i}`;
      department.set(id, name);
      people.push(id);
    }
  }
  await t.db
    .insertInto('respondents')
    .values(
      people.map((id, i) => ({
        organization_id: organizationId,
        environment: 'LIVE' as const,
        external_id: id,
        email: `${id.toLowerCase()}@example.com`,
        department: department.get(id)!,
        location: i % 2 === 0 ? 'Paris' : 'Berlin',
        hire_date: `20${10 + (i % 17)}-03-01`,
        attributes: JSON.stringify({ level: `L${i % 3}` }),
        content_hash: 'x',
        updated_at: new Date(),
      })),
    )
    .execute();

  const start = Date.UTC(2026, 9, 1);
  const responses: Generated['responses'] = [];
  const who = [...people, ...Array.from({ length: anonymous }, () => null)];
  for (const respondent of who) {
    // Answers that depend on each other, so that the drivers have something to find.
    const tools = int(1, 5);
    const manager = int(1, 5);
    const growth = int(0, 10);
    const nps = Math.max(0, Math.min(10, Math.round(tools * 1.2 + manager * 0.6 + growth * 0.2 + (rand() - 0.5) * 4)));
    const answers: Answer[] = [
      { questionId: 'nps', value: nps },
      { questionId: 'tools', value: tools },
    ];
    if (rand() < 0.85) answers.push({ questionId: 'manager', value: manager });
    if (rand() < 0.9) answers.push({ questionId: 'growth', value: growth });
    if (rand() < 0.8) answers.push({ questionId: 'where', value: ['office', 'home', 'hybrid'][int(0, 2)]! });
    if (rand() < 0.7) {
      const perks = ['learn', 'flex', 'health', 'leave'].filter(() => rand() < 0.5);
      answers.push({ questionId: 'perks', value: perks.length > 0 ? perks.slice(0, 3) : ['flex'] });
    }
    if (rand() < 0.5) answers.push({ questionId: 'change', value: 'é'.repeat(int(1, 3)) + 'x'.repeat(int(1, 40)) });
    responses.push({
      id: newId('rsp'),
      respondent,
      submittedAt: new Date(start + int(0, 9) * 86_400_000 + int(0, 86_399_999)),
      answers,
    });
  }
  await t.db
    .insertInto('responses')
    .values(
      responses.map((r) => ({
        id: r.id,
        survey_id: surveyId,
        organization_id: organizationId,
        environment: 'LIVE' as const,
        respondent_external_id: r.respondent,
        dedupe_key: null,
        answers: JSON.stringify(r.answers),
        submitted_at: r.submittedAt,
      })),
    )
    .execute();
  return { surveyId, responses, department };
}

/** The values given to one question by these responses. */
export function valuesOf(responses: Generated['responses'], questionId: string): Answer['value'][] {
  return responses.flatMap((r) => r.answers.filter((a) => a.questionId === questionId).map((a) => a.value));
}

export const numbers = (values: Answer['value'][]) => values as number[];

export const round = (value: number, decimals: number) => Number(value.toFixed(decimals));

/**
 * Forgets what the audit of released results recorded for a survey, as if it had released nothing: for tests of the
 * figures themselves, which look at one survey before and after changes smaller than the threshold.
 */
export async function forgetReleases(t: TestService, surveyId: string): Promise<void> {
  await t.db.deleteFrom('analytics_released_sets').where('survey_id', '=', surveyId).execute();
  await t.db.deleteFrom('analytics_release_audits').where('survey_id', '=', surveyId).execute();
}
