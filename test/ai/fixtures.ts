/** Builders for the AI tests: a launched survey with a scored question and a text question, and its responses. */
import { waitFor, type components } from '@survey-service/sdk';
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';

type Client = ReturnType<TestService['client']>;
export type AiAnalysis = components['schemas']['AiAnalysis'];

/** Comments on three topics, with their expected tone. */
export const meetingComments = [
  'Too many recurring meetings, I barely get any focus time.',
  'Our status meetings could be an email. Fewer meetings please.',
  'The meeting load is exhausting, half my week is in calls.',
  'Stop scheduling meetings over lunch, it is frustrating.',
  'Way too many meetings and no time to actually work.',
  'Meetings run late and have no agenda.',
];
export const flexibilityComments = [
  'I love the flexible hours and being able to work from home.',
  'Hybrid work has been great for me and my family.',
  'Remote days make me much more productive, thank you!',
  'The flexibility to choose my schedule is the best part of this job.',
  'Working from home two days a week is wonderful.',
  'Flexible working really helps with the school run, great policy.',
];
export const payComments = [
  'My salary is below the market rate and the raise was tiny.',
  'Pay is not competitive, several colleagues left for better salaries.',
  'The bonus scheme is unclear and feels unfair.',
  'I feel underpaid for the amount of responsibility I have.',
  'Compensation has not kept up with inflation at all.',
];

export async function aiTenant(t: TestService) {
  return tenantWithRaisedLimits(t);
}

export async function launchedSurvey(client: Client) {
  const survey = await client.unwrap(
    client.POST('/api/v1/surveys', {
      body: {
        title: 'Q4 pulse',
        questions: [
          { type: 'rating', text: 'I have enough time for focused work.', min: 1, max: 5 },
          { type: 'text', text: 'What would make work better?', required: false },
          { type: 'nps', text: 'How likely are you to recommend working here?', required: false },
        ],
      },
    }),
  );
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
  return survey;
}

/** Submits one response per comment (score 2 of 5 on the rating), returns the response ids by comment. */
export async function submitComments(
  client: Client,
  surveyId: string,
  comments: readonly string[],
  rating = 2,
): Promise<string[]> {
  const ids: string[] = [];
  for (const text of comments) {
    const response = await client.unwrap(
      client.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: {
          answers: [
            { questionId: 'q_1', value: rating },
            { questionId: 'q_2', value: text },
            { questionId: 'q_3', value: 7 },
          ],
        },
      }),
    );
    ids.push(response.id);
  }
  return ids;
}

export async function startAnalysis(
  client: Client,
  surveyId: string,
  body: components['schemas']['AiAnalysisRequest'] = {},
) {
  const { data, error, response } = await client.POST('/api/v1/surveys/{id}/analytics/ai/generate', {
    params: { path: { id: surveyId } },
    body,
  });
  expect(error, JSON.stringify(error)).toBeUndefined();
  expect(response.status).toBe(202);
  return data!.data;
}

export async function finished(
  client: Client,
  surveyId: string,
  analysisId: string,
  timeoutMs = 60_000,
): Promise<AiAnalysis> {
  return waitFor(
    () =>
      client.unwrap(
        client.GET('/api/v1/surveys/{id}/analytics/ai/{analysisId}', {
          params: { path: { id: surveyId, analysisId } },
        }),
      ),
    (a) => a.status === 'completed' || a.status === 'failed',
    { initialDelayMs: 100, maxDelayMs: 500, timeoutMs },
  );
}
