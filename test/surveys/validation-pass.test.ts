/**
 * One validation pass, through real HTTP: schema problems and semantic problems of one request are listed
 * together in one 400, every detail with a documented snake_case code, and query parameters are held to the
 * same text rules as bodies.
 */
import { SurveyServiceError } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, expectDocumented, raw, type RawReply } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { allTypes, tenantWithRaisedLimits } from '../helpers/surveys.js';

type Detail = { path?: string; code: string; message: string };

let t: TestService;
let tenant: Awaited<ReturnType<typeof tenantWithRaisedLimits>>;
let surveyId: string;
beforeAll(async () => {
  t = await startTestService();
  tenant = await tenantWithRaisedLimits(t);
  const survey = await tenant.live.surveys.create({ title: 'One pass', questions: allTypes });
  await tenant.live.surveys.launch(survey.id);
  surveyId = survey.id;
});
afterAll(async () => {
  await t?.close();
});

/** The detail codes the contract documents (the table of `ErrorDetail.code`). */
const documentedCodes = (() => {
  const schema = (
    contract as unknown as {
      components: { schemas: { ErrorDetail: { properties: { code: { description: string } } } } };
    }
  ).components.schemas.ErrorDetail;
  const codes = new Set<string>();
  for (const line of schema.properties.code.description.split('\n')) {
    if (!line.startsWith('| `')) continue;
    for (const match of line.split('|')[1]!.matchAll(/`([a-z][a-z0-9_]*)`/g)) codes.add(match[1]!);
  }
  return codes;
})();

function expectCoded(details: readonly Detail[]): void {
  for (const detail of details) {
    expect(detail.code, JSON.stringify(detail)).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(documentedCodes, `undocumented code ${detail.code}`).toContain(detail.code);
  }
}

async function validationError(call: Promise<unknown>): Promise<Detail[]> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(SurveyServiceError);
  const error = outcome as SurveyServiceError;
  expect([error.status, error.code]).toEqual([400, 'validation_failed']);
  return error.details as Detail[];
}

const get = (path: string): Promise<RawReply> =>
  raw(t.url, 'GET', path, { headers: { authorization: `Bearer ${tenant.liveKey}` } });

describe('submitResponse lists every problem', () => {
  it('three wrong answers and a missing required question are four problems', async () => {
    // q_1 (nps) out of its question's bounds, q_3 (single_choice) of the wrong JSON type, q_4 (multiple_choice)
    // empty: three schema problems; q_2 (rating, required) is not answered: a semantic one.
    const answers = [
      { questionId: 'q_1', value: 11 },
      { questionId: 'q_3', value: true },
      { questionId: 'q_4', value: [] },
    ];
    const details = await validationError(tenant.live.responses.submit(surveyId, { answers } as never));
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/answers/0/value' }),
        expect.objectContaining({ path: '/body/answers/1/value' }),
        expect.objectContaining({ path: '/body/answers/2/value' }),
        expect.objectContaining({ path: '/body/answers', code: 'required', message: expect.stringContaining('q_2') }),
      ]),
    );
    expect(details).toHaveLength(4);
    expectCoded(details);
  });

  it('semantic problems next to schema problems elsewhere keep their own codes', async () => {
    const answers = [
      { questionId: 'q_1', value: 'ten' },
      { questionId: 'q_2', value: 3 },
      { questionId: 'q_9', value: 1 },
      { questionId: 'q_4', value: ['c_1', 'c_1'] },
      { questionId: 'q_5', value: 'x'.repeat(30) },
    ];
    const details = await validationError(tenant.live.responses.submit(surveyId, { answers, extra: true } as never));
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/extra', code: 'unknown_field' }),
        expect.objectContaining({ path: '/body/answers/0/value', code: 'answer_type' }),
        expect.objectContaining({ path: '/body/answers/2/questionId', code: 'not_found' }),
        expect.objectContaining({ path: '/body/answers/4/value', code: 'out_of_range' }),
      ]),
    );
    expectCoded(details);
  });
});

describe('createSurvey and updateSurvey list every problem', () => {
  const duplicated = [
    { id: 'q_a', type: 'nps', text: 'One?' },
    { id: 'q_a', type: 'nps', text: 'Two?' },
    {
      type: 'single_choice',
      text: 'Three?',
      choices: [
        { id: 'c_x', label: 'A' },
        { id: 'c_x', label: 'B' },
      ],
    },
  ];

  it('a bad title and duplicate question and choice ids are listed together, each with a documented code', async () => {
    const details = await validationError(tenant.live.surveys.create({ title: '', questions: duplicated } as never));
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/title', code: 'min_length' }),
        expect.objectContaining({ path: '/body/questions/1/id', code: 'duplicate' }),
        expect.objectContaining({ path: '/body/questions/2/choices/1/id', code: 'duplicate' }),
      ]),
    );
    expect(details).toHaveLength(3);
    expectCoded(details);
  });

  it("a question's problems are its own type's only, listed with another question's logic problem", async () => {
    // A one-row matrix (rows need two) whose row has a stray field, and a later question whose rule names a
    // question that does not exist: three problems, not one complaint per question type.
    const questions = [
      { type: 'nps', text: 'Recommend us?' },
      { type: 'matrix', text: 'Grid', rows: [{ text: 'Only row', label: 'stray' }], scale: { min: 1, max: 5 } },
      { type: 'rating', text: 'Later', displayIf: { all: [{ questionId: 'q_9', op: 'answered' }] } },
    ];
    const details = await validationError(tenant.live.surveys.create({ title: 'Grid', questions } as never));
    expect(details.map((d) => [d.path, d.code]).sort()).toEqual(
      [
        ['/body/questions/1/rows', 'min_items'],
        ['/body/questions/1/rows/0/label', 'unknown_field'],
        ['/body/questions/2/displayIf/all/0/questionId', 'invalid_logic'],
      ].sort(),
    );
    expectCoded(details);
    // A type that names no variant is one problem at `type`.
    const unknownType = await validationError(
      tenant.live.surveys.create({ title: 'T', questions: [{ type: 'slider', text: 'x' }] } as never),
    );
    expect(unknownType.map((d) => d.path)).toEqual(['/body/questions/0/type']);
    // A value that is no object at all is still refused by the schema, never handed to the handler.
    const notAQuestion = await validationError(tenant.live.surveys.create({ title: 'T', questions: ['x'] } as never));
    expect(notAQuestion.map((d) => [d.path, d.code])).toEqual([['/body/questions/0', 'type']]);
  });

  it('the semantic problems alone are coded the same way', async () => {
    const details = await validationError(
      tenant.live.surveys.create({ title: 'Fine', questions: duplicated } as never),
    );
    expect(details.map((d) => [d.path, d.code])).toEqual([
      ['/body/questions/1/id', 'duplicate'],
      ['/body/questions/2/choices/1/id', 'duplicate'],
    ]);
    expectCoded(details);
  });

  it('updateSurvey too, and a NUL in the title joins them', async () => {
    const draft = await tenant.live.surveys.create({ title: 'Draft' });
    const details = await validationError(
      tenant.live.surveys.update(draft.id, { title: 'a\u0000b', questions: duplicated } as never),
    );
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/body/title', code: 'invalid_character' }),
        expect.objectContaining({ path: '/body/questions/1/id', code: 'duplicate' }),
        expect.objectContaining({ path: '/body/questions/2/choices/1/id', code: 'duplicate' }),
      ]),
    );
    expect(details).toHaveLength(3);
    expectCoded(details);
  });
});

describe('query parameters are held to the same text rules as bodies', () => {
  it.each([
    ['invalid UTF-8 (a lone surrogate encoded)', 'a%ED%A0%80b'],
    ['a lone low surrogate encoded', '%ED%B0%80'],
    ['a %u escape of a lone surrogate', 'a%uD800b'],
    ['a NUL', 'a%00b'],
    ['a malformed escape', 'a%zzb'],
  ])('%s is 400 validation_failed naming /query/search', async (_name, value) => {
    const answer = await get(`/api/v1/surveys?search=${value}`);
    expectDocumented('/api/v1/surveys', 'GET', answer, value);
    expect(answer.status, value).toBe(400);
    const details = (answer.body as { error: { details: Detail[] } }).error.details;
    expect(details).toEqual([expect.objectContaining({ path: '/query/search', code: 'invalid_character' })]);
    expectCoded(details);
  });

  it('in a parameter name too, and together with other problems', async () => {
    const answer = await get('/api/v1/respondents?department=%ED%A0%80&pageSize=0');
    expectDocumented('/api/v1/respondents', 'GET', answer);
    expect(answer.status).toBe(400);
    const details = (answer.body as { error: { details: Detail[] } }).error.details;
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/query/department', code: 'invalid_character' }),
        expect.objectContaining({ path: '/query/pageSize', code: 'minimum' }),
      ]),
    );
    const named = await get('/api/v1/surveys?se%ED%A0%80rch=x');
    expect(named.status).toBe(400);
    expect((named.body as { error: { details: Detail[] } }).error.details[0]).toMatchObject({
      code: 'invalid_character',
    });
  });

  it('well-formed text is read as before: escapes and characters outside the BMP', async () => {
    for (const value of ['50%25', 'one%20two', '%F0%9F%98%80', 'caf%C3%A9']) {
      const answer = await get(`/api/v1/surveys?search=${value}`);
      expectDocumented('/api/v1/surveys', 'GET', answer, value);
      expect(answer.status, value).toBe(200);
    }
  });
});
