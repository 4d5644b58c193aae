/** Surveys through the SDK: create (defaults and ids), update rules, every transition and refusal, delete. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

async function create(body = surveyBody()) {
  const { data, error, response } = await live.POST('/api/v1/surveys', { body });
  expect(error, JSON.stringify(error)).toBeUndefined();
  expect(response.status).toBe(201);
  return data!.data;
}

const path = (id: string) => ({ params: { path: { id } } });

async function transition(id: string, action: 'launch' | 'pause' | 'close') {
  return live.POST(`/api/v1/surveys/{id}/${action}`, path(id));
}

describe('createSurvey', () => {
  it('creates a draft, fills the defaults and assigns question and choice ids', async () => {
    const survey = await create();
    expect(survey.id).toMatch(/^srv_[0-9A-Z]{26}$/);
    expect(survey).toMatchObject({
      status: 'draft',
      responseCount: 0,
      launchedAt: null,
      pausedAt: null,
      closedAt: null,
    });
    expect(survey.settings).toEqual({ privacy: 'identified', anonymous: false, allowMultipleResponses: false });
    expect(survey.questions.map((q) => q.id)).toEqual(['q_1', 'q_2', 'q_3', 'q_4', 'q_5']);
    expect(survey.questions[0]).toEqual({
      id: 'q_1',
      type: 'nps',
      text: allTypes[0]!.text,
      description: null,
      required: true,
    });
    expect(survey.questions[1]).toMatchObject({ type: 'rating', min: 1, max: 5, required: true });
    expect(survey.questions[2]).toMatchObject({
      required: false,
      choices: [{ id: 'c_1' }, { id: 'c_2' }, { id: 'c_3' }],
    });
    expect(survey.questions[4]).toMatchObject({ type: 'text', maxLength: 20 });
    const textDefault = await create({ title: 'x', questions: [{ type: 'text', text: 't' }] });
    expect(textDefault.questions[0]).toMatchObject({ maxLength: 2000, required: true });
  });

  it('keeps explicit ids and gives the others the first numbers not used', async () => {
    const survey = await create({
      title: 'ids',
      questions: [
        { type: 'nps', text: 'a' },
        { id: 'q_1', type: 'nps', text: 'b' },
        {
          type: 'single_choice',
          text: 'c',
          choices: [{ label: 'x' }, { id: 'c_1', label: 'y' }, { id: 'custom', label: 'z' }],
        },
      ],
    });
    expect(survey.questions.map((q) => q.id)).toEqual(['q_2', 'q_1', 'q_3']);
    const choice = survey.questions[2]!;
    expect(choice.type === 'single_choice' && choice.choices.map((c) => c.id)).toEqual(['c_2', 'c_1', 'custom']);
  });

  it('refuses duplicate question and choice ids and minSelections > maxSelections, listing every problem', async () => {
    const { error, response } = await live.POST('/api/v1/surveys', {
      body: {
        title: 'bad',
        questions: [
          { id: 'same', type: 'nps', text: 'a' },
          { id: 'same', type: 'nps', text: 'b' },
          {
            type: 'multiple_choice',
            text: 'c',
            choices: [
              { id: 'x', label: '1' },
              { id: 'x', label: '2' },
            ],
            minSelections: 2,
            maxSelections: 1,
          },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(error?.error.code).toBe('validation_failed');
    expect(error?.error.details?.map((d) => d.path).sort()).toEqual(
      ['/body/questions/1/id', '/body/questions/2/choices/1/id', '/body/questions/2/minSelections'].sort(),
    );
  });

  it('refuses schema violations (unknown field, bad type) with 400', async () => {
    const bad = await live.POST('/api/v1/surveys', {
      body: { title: 'x', questions: [{ type: 'slider', text: 'a' }] } as never,
    });
    expect(bad.response.status).toBe(400);
    const extra = await live.POST('/api/v1/surveys', { body: { title: 'x', colour: 'red' } as never });
    expect(extra.response.status).toBe(400);
  });
});

describe('life cycle', () => {
  it('draft → active → paused → active → closed, recording each moment', async () => {
    const survey = await create();
    const launched = await transition(survey.id, 'launch');
    expect(launched.response.status).toBe(200);
    const first = launched.data!.data;
    expect(first.status).toBe('active');
    expect(first.launchedAt).not.toBeNull();

    const paused = (await transition(survey.id, 'pause')).data!.data;
    expect(paused.status).toBe('paused');
    expect(paused.pausedAt).not.toBeNull();

    const relaunched = (await transition(survey.id, 'launch')).data!.data;
    expect(relaunched.status).toBe('active');
    // launchedAt is the first launch; relaunching does not move it.
    expect(relaunched.launchedAt).toBe(first.launchedAt);

    const closed = (await transition(survey.id, 'close')).data!.data;
    expect(closed.status).toBe('closed');
    expect(closed.closedAt).not.toBeNull();
    expect(new Date(closed.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(survey.updatedAt).getTime());

    const row = await t.db.selectFrom('surveys').selectAll().where('id', '=', survey.id).executeTakeFirstOrThrow();
    expect(row.launched_at!.getTime()).toBeGreaterThanOrEqual(row.first_launched_at!.getTime());
  });

  it('a paused survey can be closed', async () => {
    const survey = await create();
    await transition(survey.id, 'launch');
    await transition(survey.id, 'pause');
    expect((await transition(survey.id, 'close')).data?.data.status).toBe('closed');
  });

  const refusals: Array<[string, Array<'launch' | 'pause' | 'close'>, 'launch' | 'pause' | 'close', string]> = [
    ['pause a draft', [], 'pause', 'draft'],
    ['close a draft', [], 'close', 'draft'],
    ['launch an active survey', ['launch'], 'launch', 'active'],
    ['pause a paused survey', ['launch', 'pause'], 'pause', 'paused'],
    ['launch a closed survey', ['launch', 'close'], 'launch', 'closed'],
    ['pause a closed survey', ['launch', 'close'], 'pause', 'closed'],
    ['close a closed survey', ['launch', 'close'], 'close', 'closed'],
  ];
  for (const [name, before, action, state] of refusals) {
    it(`refuses to ${name} with 409 invalid_state naming the state`, async () => {
      const survey = await create();
      for (const step of before) expect((await transition(survey.id, step)).response.status).toBe(200);
      const { error, response } = await transition(survey.id, action);
      expect(response.status).toBe(409);
      expect(error?.error.code).toBe('invalid_state');
      expect(error?.error.message).toContain(`is ${state}`);
      const after = await live.GET('/api/v1/surveys/{id}', path(survey.id));
      expect(after.data?.data.status).toBe(state);
    });
  }

  it('refuses to launch a draft without questions', async () => {
    const survey = await create({ title: 'empty' });
    const { error, response } = await transition(survey.id, 'launch');
    expect(response.status).toBe(409);
    expect(error?.error.code).toBe('invalid_state');
    expect(error?.error.message).toMatch(/draft.*no questions/);
  });

  it('lets exactly one of 10 concurrent launches win', async () => {
    const survey = await create();
    const results = await Promise.all(Array.from({ length: 10 }, () => transition(survey.id, 'launch')));
    expect(results.filter((r) => r.response.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.response.status === 409)).toHaveLength(9);
  });
});

describe('updateSurvey', () => {
  it('changes questions and merges settings of a draft', async () => {
    const survey = await create({ title: 'draft', settings: { allowMultipleResponses: true } });
    const { data, response } = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: {
        title: 'renamed',
        description: null,
        questions: [{ type: 'nps', text: 'only' }],
        settings: { anonymous: true },
      },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({
      title: 'renamed',
      description: null,
      settings: { privacy: 'anonymous', anonymous: true, allowMultipleResponses: true },
    });
    expect(data!.data.questions).toHaveLength(1);
  });

  it('keeps title and description editable while active or paused; after launch settings freeze and questions only grow', async () => {
    const survey = await create();
    await transition(survey.id, 'launch');
    const renamed = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { title: 'new title' } });
    expect(renamed.data?.data.title).toBe('new title');
    const replaced = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: { questions: [{ type: 'nps' as const, text: 'x' }] },
    });
    expect(replaced.response.status).toBe(409);
    expect(replaced.error?.error.code).toBe('survey_active');
    const settings = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: { settings: { anonymous: true } },
    });
    expect(settings.response.status).toBe(409);
    expect(settings.error?.error.code).toBe('survey_active');
    expect(settings.error?.error.details?.map((detail) => detail.path)).toEqual([
      '/body/settings/privacy',
      '/body/settings/anonymous',
    ]);
    // The settings it has, sent back as they are, change nothing.
    const same = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { settings: survey.settings } });
    expect(same.response.status).toBe(200);
    await transition(survey.id, 'pause');
    const paused = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: { description: 'paused text' },
    });
    expect(paused.data?.data.description).toBe('paused text');
    const emptied = await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: { questions: [] } });
    expect(emptied.response.status).toBe(409);
    expect(emptied.error?.error.code).toBe('survey_active');
    expect(emptied.error?.error.details).toHaveLength(5);
  });

  it('refuses any change to a closed survey', async () => {
    const survey = await create();
    await transition(survey.id, 'launch');
    await transition(survey.id, 'close');
    const { error, response } = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: { title: 'late' },
    });
    expect(response.status).toBe(409);
    expect(error?.error.message).toContain('closed');
  });

  it('refuses an empty body and duplicate ids with 400', async () => {
    const survey = await create();
    expect((await live.PATCH('/api/v1/surveys/{id}', { ...path(survey.id), body: {} })).response.status).toBe(400);
    const dup = await live.PATCH('/api/v1/surveys/{id}', {
      ...path(survey.id),
      body: {
        questions: [
          { id: 'a', type: 'nps', text: 'x' },
          { id: 'a', type: 'nps', text: 'y' },
        ],
      },
    });
    expect(dup.response.status).toBe(400);
    expect(dup.error?.error.details?.[0]?.path).toBe('/body/questions/1/id');
  });
});

describe('deleteSurvey', () => {
  it('deletes in any state, together with its responses', async () => {
    const survey = await create();
    await transition(survey.id, 'launch');
    const submitted = await live.POST('/api/v1/surveys/{id}/responses', {
      ...path(survey.id),
      body: { answers: validAnswers },
    });
    expect(submitted.response.status).toBe(201);
    const { data, response } = await live.DELETE('/api/v1/surveys/{id}', path(survey.id));
    expect(response.status).toBe(200);
    expect(data?.data).toEqual({ id: survey.id, deleted: true });
    expect((await live.GET('/api/v1/surveys/{id}', path(survey.id))).response.status).toBe(404);
    const left = await t.db.selectFrom('responses').select('id').where('survey_id', '=', survey.id).execute();
    expect(left).toHaveLength(0);
    expect((await live.DELETE('/api/v1/surveys/{id}', path(survey.id))).response.status).toBe(404);
  });

  it('answers 404 for malformed and unknown ids', async () => {
    for (const id of ['nope', 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8', "srv_'; drop table surveys;--"]) {
      const { error, response } = await live.GET('/api/v1/surveys/{id}', path(id));
      expect(response.status).toBe(404);
      expect(error?.error.code).toBe('not_found');
    }
  });
});
