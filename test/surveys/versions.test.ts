/**
 * Versions of a launched survey: what may still change after the launch (texts, new choices and new optional
 * questions after the existing ones), the version each change makes, what each response records, and that
 * responses of every version count together in analytics and events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

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

async function launched() {
  const survey = await live.unwrap(live.POST('/api/v1/surveys', { body: surveyBody() }));
  expect(survey.version).toBeNull();
  const empty = await live.unwrap(live.GET('/api/v1/surveys/{id}/versions', path(survey.id)));
  expect(empty).toEqual([]);
  const active = await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(survey.id)));
  expect(active.version).toBe(1);
  return active;
}

const submit = (id: string, answers: components['schemas']['Answer'][]) =>
  live.POST('/api/v1/surveys/{id}/responses', { ...path(id), body: { answers } });

/** The survey's questions as input, with their ids (what a client sends back to change them). */
const asInput = (questions: Question[]): QuestionInput[] => structuredClone(questions) as QuestionInput[];

describe('survey versions', () => {
  it('makes a version of each change after the launch; responses record theirs and count together', async () => {
    const survey = await launched();
    for (let i = 0; i < 5; i++) {
      const first = await live.unwrap(submit(survey.id, validAnswers));
      expect(first.surveyVersion).toBe(1);
    }

    // Reword a question, add a choice to a single choice, and add an optional question at the end.
    const questions = asInput(survey.questions);
    questions[0]!.text = 'How likely are you to recommend working here?';
    const choice = questions[2] as Extract<QuestionInput, { type: 'single_choice' }>;
    choice.choices = [...choice.choices, { label: 'On the road' }];
    questions.push({ type: 'text', text: 'What changed since last time?', required: false });
    const changed = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions, title: 'Pulse (v2)' } }),
    );
    expect(changed.version).toBe(2);
    expect(changed.questions.map((q) => q.id)).toEqual(['q_1', 'q_2', 'q_3', 'q_4', 'q_5', 'q_6']);
    expect((changed.questions[2] as Extract<Question, { type: 'single_choice' }>).choices.at(-1)).toEqual({
      id: 'c_4',
      label: 'On the road',
    });

    // A request that changes nothing makes no version.
    const same = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { title: 'Pulse (v2)' } }),
    );
    expect(same.version).toBe(2);

    // The process's cached copy of version 1 refuses the new question and choice; the survey as it is now accepts them.
    for (let i = 0; i < 5; i++) {
      const second = await live.unwrap(
        submit(survey.id, [
          ...validAnswers.filter((a) => a.questionId !== 'q_3'),
          { questionId: 'q_3', value: 'c_4' },
          { questionId: 'q_6', value: 'More focus' },
        ]),
      );
      expect(second.surveyVersion).toBe(2);
    }
    const refused = await submit(survey.id, [...validAnswers, { questionId: 'q_7', value: 'x' }]);
    expect(refused.response.status).toBe(400);

    // Each version reads whole; an unknown one is 404.
    const v1 = await live.unwrap(
      live.GET('/api/v1/surveys/{id}', { params: { path: { id: survey.id }, query: { version: 1 } } }),
    );
    expect(v1).toMatchObject({ version: 1, title: survey.title, status: 'active', responseCount: 10 });
    expect(v1.questions).toEqual(survey.questions);
    const v2 = await live.unwrap(
      live.GET('/api/v1/surveys/{id}', { params: { path: { id: survey.id }, query: { version: 2 } } }),
    );
    expect(v2.questions).toEqual(changed.questions);
    const missing = await live.GET('/api/v1/surveys/{id}', {
      params: { path: { id: survey.id }, query: { version: 3 } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('not_found');
    const versions = await live.unwrap(live.GET('/api/v1/surveys/{id}/versions', path(survey.id)));
    expect(versions.map((v) => [v.version, v.title, v.questions.length])).toEqual([
      [1, survey.title, 5],
      [2, 'Pulse (v2)', 6],
    ]);

    // Responses list their versions; analytics count every version by question and choice id.
    const listed = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: survey.id }, query: { pageSize: 100 } } }),
    );
    expect(listed.map((r) => r.surveyVersion).sort()).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    const stats = await live.unwrap(live.GET('/api/v1/surveys/{id}/analytics/static', path(survey.id)));
    expect(stats.responseCount).toBe(10);
    const where = stats.questions.find((q) => q.questionId === 'q_3') as unknown as {
      choices: { choiceId: string; count: number }[];
    };
    expect(where.choices.map((c) => [c.choiceId, c.count])).toEqual([
      ['c_1', 0],
      ['c_2', 0],
      ['c_3', 5],
      ['c_4', 5],
    ]);
    expect(stats.questions.find((q) => q.questionId === 'q_6')?.answeredCount).toBe(5);
    expect(stats.questions.find((q) => q.questionId === 'q_1')?.answeredCount).toBe(10);

    // Events carry the version: the launch's survey, and each response.
    const submitted = await live.unwrap(
      live.GET('/api/v1/events', { params: { query: { type: 'response.submitted', pageSize: 100 } } }),
    );
    const ofSurvey = submitted.filter((e) => (e.data as { surveyId: string }).surveyId === survey.id);
    expect(ofSurvey.map((e) => (e.data as { surveyVersion: number }).surveyVersion).sort()).toEqual([
      1, 1, 1, 1, 1, 2, 2, 2, 2, 2,
    ]);
    const launches = await live.unwrap(live.GET('/api/v1/events', { params: { query: { type: 'survey.launched' } } }));
    expect(launches.find((e) => (e.data as { id: string }).id === survey.id)?.data).toMatchObject({ version: 1 });

    // A pause and a relaunch keep the version.
    await live.unwrap(live.POST('/api/v1/surveys/{id}/pause', path(survey.id)));
    const relaunched = await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', path(survey.id)));
    expect(relaunched.version).toBe(2);
    expect(await live.unwrap(live.GET('/api/v1/surveys/{id}/versions', path(survey.id)))).toHaveLength(2);
  });

  it('refuses, with every problem at once, a change that would alter what earlier answers meant', async () => {
    const survey = await launched();
    const questions = asInput(survey.questions);
    questions[0] = { ...questions[0]!, type: 'rating', min: 0, max: 10 } as QuestionInput; // nps → rating
    (questions[1] as Extract<QuestionInput, { type: 'rating' }>).max = 7; // scale
    const choice = questions[2] as Extract<QuestionInput, { type: 'single_choice' }>;
    choice.choices = choice.choices.slice(1); // a choice removed
    (questions[3] as Extract<QuestionInput, { type: 'multiple_choice' }>).maxSelections = 3; // a rule
    questions.splice(4, 1); // a question removed
    questions.push({ type: 'nps', text: 'In place of the removed one' }); // gets a new id: not the removed q_5
    const { error, response } = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions } });
    expect(response.status).toBe(409);
    expect(error?.error.code).toBe('survey_active');
    expect(error?.error.details?.map((d) => [d.path, d.code])).toEqual([
      ['/body/questions/0/type', 'type_changed'],
      ['/body/questions/1/max', 'scale_changed'],
      ['/body/questions/2/choices/0', 'choice_moved'],
      ['/body/questions/2/choices/1', 'choice_moved'],
      ['/body/questions/2/choices/2', 'choice_moved'],
      ['/body/questions/3/maxSelections', 'rule_changed'],
      ['/body/questions/4', 'question_moved'],
    ]);
    // A new question must be optional; moving questions, or making one required, is refused too.
    const added = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: { questions: [...asInput(survey.questions), { type: 'nps', text: 'New and required' }] },
    });
    expect(added.error?.error.details).toEqual([
      expect.objectContaining({ path: '/body/questions/5/required', code: 'new_question_required' }),
    ]);
    const moved = asInput(survey.questions).reverse();
    const reorder = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: moved } });
    expect(reorder.error?.error.code).toBe('survey_active');
    const required = asInput(survey.questions);
    required[2]!.required = true;
    const stricter = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: required } });
    expect(stricter.error?.error.details).toEqual([
      expect.objectContaining({ path: '/body/questions/2/required', code: 'required_changed' }),
    ]);
    // Nothing was stored.
    const after = await live.unwrap(live.GET('/api/v1/surveys/{id}', path(survey.id)));
    expect(after.version).toBe(1);
    expect(after.questions).toEqual(survey.questions);
    expect(await live.unwrap(live.GET('/api/v1/surveys/{id}/versions', path(survey.id)))).toHaveLength(1);
  });

  it('lets a draft change freely and without versions, and a closed survey not at all', async () => {
    const draft = await live.unwrap(live.POST('/api/v1/surveys', { body: surveyBody() }));
    const rewritten = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { ...path(draft.id), body: { questions: allTypes.slice(0, 2).reverse() } }),
    );
    expect(rewritten.version).toBeNull();
    expect(rewritten.questions.map((q) => q.type)).toEqual(['rating', 'nps']);
    const survey = await launched();
    await live.unwrap(live.POST('/api/v1/surveys/{id}/close', path(survey.id)));
    const late = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { title: 'late' } });
    expect(late.response.status).toBe(409);
    expect(late.error?.error.code).toBe('invalid_state');
    const unknown = await live.GET('/api/v1/surveys/{id}/versions', path('srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8'));
    expect(unknown.response.status).toBe(404);
  });
});
