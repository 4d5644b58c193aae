/**
 * Display logic (`displayIf`): checked when a survey is written, applied to every submission (a question not shown
 * is never required and takes no answer), changeable after the launch as a new version, and applied by the answer
 * page, which shows the questions that the answers so far call for (without a script, one post at a time).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import {
  activeSurvey,
  startWithSmtp,
  tenant,
  waitForStatus,
  type Client,
  embedUrl,
} from '../distributions/fixtures.js';
import type { TestSmtp } from '../distributions/smtp.js';
import type { TestService } from '../helpers/service.js';

type QuestionInput = components['schemas']['QuestionInput'];
type Answer = components['schemas']['Answer'];

let t: TestService;
let smtp: TestSmtp;
let live: Client;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
  ({ live } = await tenant(t));
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** q_2 follows a low score; q_4 a "Home" choice or a high score; q_5 an answered q_2 (a chain of logic). */
const withLogic: QuestionInput[] = [
  { type: 'nps', text: 'How likely are you to recommend us?' },
  { type: 'text', text: 'What went wrong?', displayIf: { all: [{ questionId: 'q_1', op: 'lte', value: 6 }] } },
  {
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: [{ label: 'Office' }, { label: 'Home' }],
  },
  {
    type: 'rating',
    text: 'How good is your set-up?',
    displayIf: {
      any: [
        { questionId: 'q_3', op: 'equals', value: 'c_2' },
        { questionId: 'q_1', op: 'gte', value: 9 },
      ],
    },
  },
  {
    type: 'text',
    text: 'Anything else about it?',
    required: false,
    displayIf: { all: [{ questionId: 'q_2', op: 'answered' }] },
  },
];

const submit = (surveyId: string, answers: Answer[]) =>
  live.POST('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } }, body: { answers } });

const storedCount = async (surveyId: string) =>
  Number(
    (await sql<{ n: string }>`select count(*) as n from responses where survey_id = ${surveyId}`.execute(t.db)).rows[0]!
      .n,
  );

describe('display logic', () => {
  it('requires only the questions shown, and refuses answers to the others', async () => {
    const surveyId = await activeSurvey(live, { questions: withLogic });
    const survey = await live.unwrap(live.GET('/api/v1/surveys/{id}', { params: { path: { id: surveyId } } }));
    expect(survey.questions[1]!.displayIf).toEqual({ all: [{ questionId: 'q_1', op: 'lte', value: 6 }] });
    expect(survey.questions[0]!.displayIf).toBeUndefined();

    // A promoter: q_2 is hidden (not required), q_4 is shown by the score and required.
    const missing = await submit(surveyId, [{ questionId: 'q_1', value: 9 }]);
    expect(missing.response.status).toBe(400);
    expect(missing.error?.error.details).toEqual([
      expect.objectContaining({ path: '/body/answers', code: 'required', message: expect.stringContaining('q_4') }),
    ]);
    expect(
      (
        await submit(surveyId, [
          { questionId: 'q_1', value: 9 },
          { questionId: 'q_4', value: 4 },
        ])
      ).response.status,
    ).toBe(201);
    const hiddenAnswered = await submit(surveyId, [
      { questionId: 'q_1', value: 9 },
      { questionId: 'q_2', value: 'nothing' },
      { questionId: 'q_4', value: 4 },
    ]);
    expect(hiddenAnswered.response.status).toBe(400);
    expect(hiddenAnswered.error?.error.details).toEqual([
      expect.objectContaining({ path: '/body/answers/1/questionId', code: 'answer_not_displayed' }),
    ]);

    // A detractor working from home: q_2 and q_4 are shown, and q_5 once q_2 is answered.
    const detractor = await submit(surveyId, [
      { questionId: 'q_1', value: 3 },
      { questionId: 'q_3', value: 'c_2' },
    ]);
    expect(detractor.error?.error.details?.map((d) => d.message)).toEqual([
      expect.stringContaining('q_2'),
      expect.stringContaining('q_4'),
    ]);
    const full = await submit(surveyId, [
      { questionId: 'q_1', value: 3 },
      { questionId: 'q_2', value: 'Slow laptops' },
      { questionId: 'q_3', value: 'c_2' },
      { questionId: 'q_4', value: 2 },
      { questionId: 'q_5', value: 'Really slow' },
    ]);
    expect(full.response.status).toBe(201);
    // In the office, as a detractor: q_4 is hidden, so its answer is refused.
    const office = await submit(surveyId, [
      { questionId: 'q_1', value: 3 },
      { questionId: 'q_2', value: 'x' },
      { questionId: 'q_3', value: 'c_1' },
      { questionId: 'q_4', value: 2 },
    ]);
    expect(office.error?.error.details?.map((d) => d.code)).toEqual(['answer_not_displayed']);
    expect(await storedCount(surveyId)).toBe(2);
  });

  it('refuses unsound logic when a survey is written, naming every rule', async () => {
    const { error, response } = await live.POST('/api/v1/surveys', {
      body: {
        title: 'Broken logic',
        questions: [
          { type: 'nps', text: 'Score?', displayIf: { all: [{ questionId: 'q_1', op: 'answered' }] } },
          {
            type: 'single_choice',
            text: 'Where?',
            choices: [{ label: 'A' }, { label: 'B' }],
            displayIf: {
              all: [
                { questionId: 'q_3', op: 'answered' },
                { questionId: 'nope', op: 'answered' },
                { questionId: 'q_1', op: 'equals' },
                { questionId: 'q_1', op: 'in', value: 7 },
                { questionId: 'q_1', op: 'answered', value: 1 },
              ],
            },
          },
          {
            type: 'text',
            text: 'Why?',
            displayIf: {
              any: [
                { questionId: 'q_2', op: 'gte', value: 1 },
                { questionId: 'q_2', op: 'equals', value: 'c_9' },
                { questionId: 'q_1', op: 'in', value: ['c_1'] },
              ],
            },
          },
          { type: 'text', text: 'More?', displayIf: { all: [{ questionId: 'q_3', op: 'equals', value: 'x' }] } },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(error?.error.details?.map((d) => [d.path, d.code])).toEqual([
      ['/body/questions/0/displayIf/all/0/questionId', 'invalid_logic'],
      ['/body/questions/1/displayIf/all/0/questionId', 'invalid_logic'],
      ['/body/questions/1/displayIf/all/1/questionId', 'invalid_logic'],
      ['/body/questions/1/displayIf/all/2/value', 'invalid_logic'],
      ['/body/questions/1/displayIf/all/3/value', 'invalid_logic'],
      ['/body/questions/1/displayIf/all/4/value', 'invalid_logic'],
      ['/body/questions/2/displayIf/any/0/op', 'invalid_logic'],
      ['/body/questions/2/displayIf/any/1/value', 'invalid_logic'],
      ['/body/questions/2/displayIf/any/2/value/0', 'invalid_logic'],
      ['/body/questions/3/displayIf/all/0/op', 'invalid_logic'],
    ]);
  });

  it('lets logic change after the launch, as a new version', async () => {
    const surveyId = await activeSurvey(live);
    const survey = await live.unwrap(live.GET('/api/v1/surveys/{id}', { params: { path: { id: surveyId } } }));
    const questions = structuredClone(survey.questions) as QuestionInput[];
    questions[4]!.displayIf = { all: [{ questionId: 'q_1', op: 'lte', value: 6 }] };
    const changed = await live.unwrap(
      live.PATCH('/api/v1/surveys/{id}', { params: { path: { id: surveyId } }, body: { questions } }),
    );
    expect(changed.version).toBe(2);
    const hidden = await submit(surveyId, [
      { questionId: 'q_1', value: 10 },
      { questionId: 'q_2', value: 3 },
      { questionId: 'q_5', value: 'x' },
    ]);
    expect(hidden.error?.error.details?.map((d) => d.code)).toEqual(['answer_not_displayed']);
  });

  it('the answer page shows the questions the answers call for, one post at a time without a script', async () => {
    const surveyId = await activeSurvey(live, { questions: withLogic, settings: { anonymous: true } });
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'embed' } },
      }),
    );
    const done = await waitForStatus(live, surveyId, d.id, ['sent']);
    const url = embedUrl(done);
    // The questions shown; the others are on the page too, hidden and disabled, for the page's script.
    const groups = (html: string) =>
      [...html.matchAll(/<fieldset id="(q_\d+)-group"( hidden disabled)?/g)].filter((m) => !m[2]).map((m) => m[1]);
    const post = (fields: Array<[string, string]>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });

    const first = await (await fetch(url)).text();
    expect(groups(first)).toEqual(['q_1', 'q_3']);
    expect(first).toContain('<fieldset id="q_2-group" hidden disabled>');
    expect(first).toContain('name="survey.shown" value="q_1,q_3"');
    // A low score shows "What went wrong?": the page comes back with it, and stores nothing yet.
    const second = await post([
      ['survey.shown', 'q_1,q_3'],
      ['q_1', '3'],
    ]);
    expect(second.status).toBe(200);
    const secondHtml = await second.text();
    expect(groups(secondHtml)).toEqual(['q_1', 'q_2', 'q_3']);
    expect(secondHtml).toContain('changed which questions apply');
    expect(await storedCount(surveyId)).toBe(0);
    // Answering it shows the follow-up; changing the score back hides both again, and drops their answers.
    const third = await post([
      ['survey.shown', 'q_1,q_2,q_3'],
      ['q_1', '3'],
      ['q_2', 'Slow laptops'],
    ]);
    expect(groups(await third.text())).toEqual(['q_1', 'q_2', 'q_3', 'q_5']);
    const back = await post([
      ['survey.shown', 'q_1,q_2,q_3,q_5'],
      ['q_1', '7'],
      ['q_2', 'Slow laptops'],
    ]);
    expect(groups(await back.text())).toEqual(['q_1', 'q_3']);
    expect(await storedCount(surveyId)).toBe(0);
    // Submitted as shown: stored, without the answers to the questions no longer shown.
    const stored = await post([
      ['survey.shown', 'q_1,q_3'],
      ['q_1', '7'],
      ['q_2', 'Slow laptops'],
      ['q_3', 'c_1'],
    ]);
    expect(stored.status).toBe(200);
    const rows = await sql<{ answers: Answer[] }>`select answers from responses where survey_id = ${surveyId}`.execute(
      t.db,
    );
    expect(rows.rows.map((r) => r.answers)).toEqual([
      [
        { questionId: 'q_1', value: 7 },
        { questionId: 'q_3', value: 'c_1' },
      ],
    ]);
  });
});
