/**
 * Question keys: a stable name of what a question measures across surveys. Stored with the question, unique within
 * a survey, of a fixed pattern, and editable after the launch as a new version (no stored answer depends on it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, surveyBody, tenantWithRaisedLimits } from '../helpers/surveys.js';

type Question = components['schemas']['Question'];
type QuestionInput = components['schemas']['QuestionInput'];

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

const path = (id: string) => ({ params: { path: { id } } });
const asInput = (questions: Question[]): QuestionInput[] => structuredClone(questions) as QuestionInput[];
const keyed = (...keys: Array<string | null | undefined>): QuestionInput[] =>
  allTypes.map((q, i) => (keys[i] === undefined ? q : { ...q, key: keys[i] }));

describe('question keys', () => {
  it('stores a key with its question, and leaves it out of questions without one', async () => {
    const survey = await live.unwrap(
      live.POST('/api/v1/surveys', {
        body: surveyBody({ questions: keyed('engagement.recommend', 'tools_2-b', null) }),
      }),
    );
    expect(survey.questions.map((q) => q.key)).toEqual([
      'engagement.recommend',
      'tools_2-b',
      undefined,
      undefined,
      undefined,
    ]);
    expect('key' in survey.questions[2]!).toBe(false);
    const read = await live.unwrap(live.GET('/api/v1/surveys/{id}', path(survey.id)));
    expect(read.questions).toEqual(survey.questions);
  });

  it('refuses a key used twice in one survey, naming each repeat, and stores nothing', async () => {
    const before = await live.unwrap(live.GET('/api/v1/surveys', { params: { query: { pageSize: 100 } } }));
    const { error, response } = await live.POST('/api/v1/surveys', {
      body: surveyBody({ questions: keyed('same.key', 'other', 'same.key', 'same.key') }),
    });
    expect(response.status).toBe(400);
    expect(error?.error.code).toBe('validation_failed');
    expect(error?.error.details?.map((d) => [d.path, d.code])).toEqual([
      ['/body/questions/2/key', 'duplicate'],
      ['/body/questions/3/key', 'duplicate'],
    ]);
    const after = await live.unwrap(live.GET('/api/v1/surveys', { params: { query: { pageSize: 100 } } }));
    expect(after.length).toBe(before.length);

    // On an update too, and together with a problem the schema finds.
    const draft = await live.unwrap(live.POST('/api/v1/surveys', { body: surveyBody() }));
    const both = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(draft.id),
      body: {
        questions: [
          { type: 'nps', text: 'A', key: 'dup' },
          { type: 'nps', text: 'B', key: 'dup' },
          { type: 'nps', text: '' },
        ],
      },
    });
    expect(both.response.status).toBe(400);
    expect(both.error?.error.details?.map((d) => d.path)).toEqual(
      expect.arrayContaining(['/body/questions/1/key', '/body/questions/2/text']),
    );
  });

  it('refuses a key outside the pattern', async () => {
    for (const key of ['Engagement', '.starts-with-dot', 'has space', 'ü', '', 'x'.repeat(101)]) {
      const { error, response } = await live.POST('/api/v1/surveys', {
        body: surveyBody({ questions: [{ type: 'nps', text: 'Recommend?', key }] }),
      });
      expect(response.status, key).toBe(400);
      expect(error?.error.code).toBe('validation_failed');
      expect(
        error?.error.details?.some((d) => d.path === '/body/questions/0/key'),
        key,
      ).toBe(true);
    }
    const longest = await live.POST('/api/v1/surveys', {
      body: surveyBody({ questions: [{ type: 'nps', text: 'Recommend?', key: `a${'b'.repeat(99)}` }] }),
    });
    expect(longest.response.status).toBe(201);
  });

  it('lets a launched survey set, change and remove keys, each change a new version', async () => {
    const draft = await live.unwrap(live.POST('/api/v1/surveys', { body: surveyBody() }));
    const survey = await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(draft.id)));
    expect(survey.version).toBe(1);

    const set = asInput(survey.questions);
    set[0]!.key = 'engagement.recommend';
    const v2 = await live.unwrap(live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: set } }));
    expect(v2.version).toBe(2);
    expect(v2.questions[0]!.key).toBe('engagement.recommend');

    const renamed = asInput(v2.questions);
    renamed[0]!.key = 'engagement.enps';
    const v3 = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: renamed } }),
    );
    expect(v3.version).toBe(3);

    const same = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: asInput(v3.questions) } }),
    );
    expect(same.version).toBe(3);

    const removed = asInput(v3.questions);
    removed[0]!.key = null;
    const v4 = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: removed } }),
    );
    expect(v4.version).toBe(4);
    expect('key' in v4.questions[0]!).toBe(false);

    const versions = await live.unwrap(live.GET('/api/v1/surveys/{id}/versions', path(survey.id)));
    expect(versions.map((v) => v.questions[0]!.key)).toEqual([
      undefined,
      'engagement.recommend',
      'engagement.enps',
      undefined,
    ]);

    // A duplicate is still a 400 after the launch, and makes no version.
    const twice = asInput(v4.questions);
    twice[0]!.key = 'x';
    twice[1]!.key = 'x';
    const refused = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: twice } });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.details?.map((d) => [d.path, d.code])).toEqual([
      ['/body/questions/1/key', 'duplicate'],
    ]);
    expect((await live.unwrap(live.GET('/api/v1/surveys/{id}', path(survey.id)))).version).toBe(4);
  });
});
