/** Shared builders for the surveys tests: a tenant with raised limits, a survey of every question type. */
import type { components } from '@survey-service/sdk';
import type { TestService } from './service.js';

export type SurveyCreate = components['schemas']['SurveyCreate'];
export type QuestionInput = components['schemas']['QuestionInput'];

/** Tests send many requests; the PRO limit (300/min) would otherwise turn some into 429s. */
export async function tenantWithRaisedLimits(t: TestService) {
  const tenant = await t.createTenant();
  await t.db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: 100000, rate_limit_per_day: 1000000 })
    .where('id', '=', tenant.organizationId)
    .execute();
  return { ...tenant, live: t.client(tenant.liveKey), test: t.client(tenant.testKey) };
}

export const allTypes: QuestionInput[] = [
  { type: 'nps', text: 'How likely are you to recommend us?' },
  { type: 'rating', text: 'Tools are good', minLabel: 'Bad', maxLabel: 'Good' },
  {
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: [{ label: 'Office' }, { label: 'Home' }, { label: 'Hybrid' }],
  },
  {
    type: 'multiple_choice',
    text: 'Benefits?',
    required: false,
    choices: [{ label: 'Learning' }, { label: 'Flex' }, { label: 'Health' }, { label: 'Leave' }],
    minSelections: 1,
    maxSelections: 2,
  },
  { type: 'text', text: 'Anything else?', required: false, maxLength: 20 },
];

export function surveyBody(overrides: Partial<SurveyCreate> = {}): SurveyCreate {
  return { title: 'Q4 engagement pulse', description: 'How work feels', questions: allTypes, ...overrides };
}

/** Valid answers to `allTypes`. */
export const validAnswers: components['schemas']['Answer'][] = [
  { questionId: 'q_1', value: 9 },
  { questionId: 'q_2', value: 4 },
  { questionId: 'q_3', value: 'c_3' },
  { questionId: 'q_4', value: ['c_1', 'c_2'] },
  { questionId: 'q_5', value: 'More focus time' },
];

/** `validAnswers` as the answer page's form posts them (application/x-www-form-urlencoded fields). */
export const validForm: Array<[string, string]> = [
  ['q_1', '9'],
  ['q_2', '4'],
  ['q_3', 'c_3'],
  ['q_4', 'c_1'],
  ['q_4', 'c_2'],
  ['q_5', 'More focus time'],
];
