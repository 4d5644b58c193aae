/**
 * A survey goes back as it came: what `GET /surveys/{id}` returns is accepted by `POST /surveys` (a copy, with the
 * question, choice and row ids kept) and by `PATCH /surveys/{id}` (nothing changes), for every question type and
 * option, before and after launch, and for every offline AI draft. Through HTTP.
 */
import { readFileSync } from 'node:fs';
import type { components } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, tenantWithRaisedLimits } from '../helpers/surveys.js';

type Survey = components['schemas']['Survey'];
type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

let t: TestService;
let live: Client;
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

const path = (id: string) => ({ params: { path: { id } } });

/** Every question type, and every option each takes. */
const everything = [
  ...allTypes,
  {
    type: 'matrix',
    text: 'How much do you agree?',
    rows: [{ text: 'I know what is expected of me' }, { id: 'r_tools', text: 'I have the tools' }],
    scale: { min: 1, max: 5, minLabel: 'Disagree', maxLabel: 'Agree' },
    allowNotApplicable: true,
  },
  {
    type: 'matrix',
    text: 'How often?',
    rows: [{ text: 'Feedback' }, { text: 'Recognition' }],
    columns: [{ label: 'Never' }, { id: 'c_often', label: 'Often' }],
    required: false,
  },
  { type: 'ranking', text: 'Rank the benefits', choices: [{ label: 'Pay' }, { label: 'Leave' }, { label: 'Gym' }] },
  { type: 'number', text: 'Hours a week?', min: 0, max: 80, integer: true, required: false },
  { type: 'date', text: 'Start date?', min: '2020-01-01', max: '2030-12-31', required: false },
  {
    type: 'rating',
    text: 'My manager supports me',
    key: 'engagement.manager',
    allowNotApplicable: true,
    displayIf: { all: [{ questionId: 'q_1', op: 'gte', value: 7 }] },
  },
  {
    type: 'single_choice',
    text: 'Where do you work?',
    choices: [{ label: 'Office' }, { label: 'Home' }],
    allowOther: true,
    displayIf: { any: [{ questionId: 'q_1', op: 'answered' }] },
  },
] as components['schemas']['QuestionInput'][];

/** What a copy shares with its original (the server sets the rest). */
const content = (survey: Survey) => ({
  title: survey.title,
  description: survey.description,
  questions: survey.questions,
  settings: survey.settings,
  languages: survey.languages,
});

async function roundTrip(original: Survey): Promise<void> {
  const copy = await live.POST('/api/v1/surveys', { body: original as never });
  expect(copy.error, JSON.stringify(copy.error)).toBeUndefined();
  expect(copy.response.status).toBe(201);
  expect(copy.data!.data.id).not.toBe(original.id);
  expect(copy.data!.data.status).toBe('draft');
  expect(content(copy.data!.data)).toEqual(content(original));

  const unchanged = await live.PATCH('/api/v1/surveys/{id}', { ...path(original.id), body: original as never });
  expect(unchanged.error, JSON.stringify(unchanged.error)).toBeUndefined();
  expect(content(unchanged.data!.data)).toEqual(content(original));
  expect(unchanged.data!.data.version).toBe(original.version);
}

describe('a survey as GET returns it', () => {
  it('is accepted back by createSurvey and updateSurvey, every type and option, ids kept, before and after launch', async () => {
    const created = await live.unwrap(
      live.POST('/api/v1/surveys', {
        body: {
          title: 'Everything',
          description: 'Every question type',
          questions: everything,
          languages: ['en', 'de'],
          settings: { privacy: 'confidential', allowMultipleResponses: true },
        },
      }),
    );
    await roundTrip(await live.unwrap(live.GET('/api/v1/surveys/{id}', path(created.id))));
    await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(created.id)));
    await roundTrip(await live.unwrap(live.GET('/api/v1/surveys/{id}', path(created.id))));
  });

  it("refuses another survey's id, and a matrix with both sides or neither", async () => {
    const [a, b] = await Promise.all(
      [1, 2].map(() => live.unwrap(live.POST('/api/v1/surveys', { body: { title: 'x', questions: allTypes } }))),
    );
    const crossed = await live.PATCH('/api/v1/surveys/{id}', { ...path(a!.id), body: b as never });
    expect(crossed.response.status).toBe(400);
    expect(crossed.error!.error.details!.map((d) => [d.path, d.code])).toEqual([['/body/id', 'invalid_value']]);
    const rows = [{ text: 'a' }, { text: 'b' }];
    for (const sides of [
      { scale: null, columns: null },
      { scale: { max: 5 }, columns: [{ label: 'x' }, { label: 'y' }] },
    ]) {
      const refused = await live.POST('/api/v1/surveys', {
        body: { title: 'Grid', questions: [{ type: 'matrix', text: 'Grid', rows, ...sides }] } as never,
      });
      expect(refused.response.status).toBe(400);
      expect(refused.error!.error.details!.map((d) => [d.path, d.code])).toEqual([['/body/questions/0', 'one_of']]);
    }
  });

  it('every offline AI draft is accepted back by createSurvey as it is', async () => {
    const prompts = readFileSync(new URL('../ai/data/prompts.tsv', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[2]!);
    expect(prompts.length).toBeGreaterThan(30);
    const refused: string[] = [];
    for (const [i, prompt] of prompts.entries()) {
      const draft = await live.unwrap(
        live.POST('/api/v1/surveys/generate', { body: { prompt, questionCount: 4 + (i % 12) } }),
      );
      const copy = await live.POST('/api/v1/surveys', { body: draft as never });
      if (copy.response.status !== 201) refused.push(`${prompt}: ${JSON.stringify(copy.error)}`);
      else expect(content(copy.data!.data)).toEqual(content(draft));
    }
    expect(refused).toEqual([]);
  });
});
