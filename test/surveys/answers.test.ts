/** The pure rules: question normalisation and answer validation, one rule at a time. */
import { describe, expect, it } from 'vitest';
import { validateAnswers, type Answer } from '../../server/src/modules/surveys/answers.js';
import { normaliseQuestions } from '../../server/src/modules/surveys/questions.js';
import { allTypes, validAnswers } from '../helpers/surveys.js';

const { questions } = normaliseQuestions(allTypes);
const check = (answers: Answer[]) => validateAnswers(questions, answers);
const without = (id: string) => validAnswers.filter((a) => a.questionId !== id);
const replace = (id: string, value: unknown): Answer[] =>
  validAnswers.map((a) => (a.questionId === id ? { questionId: id, value: value as Answer['value'] } : a));

describe('normaliseQuestions', () => {
  it('fills defaults and assigns ids', () => {
    expect(questions[1]).toEqual({
      id: 'q_2',
      type: 'rating',
      text: 'Tools are good',
      description: null,
      required: true,
      min: 1,
      max: 5,
      minLabel: 'Bad',
      maxLabel: 'Good',
    });
    expect(questions[3]).toMatchObject({
      minSelections: 1,
      maxSelections: 2,
      choices: [{ id: 'c_1' }, { id: 'c_2' }, { id: 'c_3' }, { id: 'c_4' }],
    });
  });
  it('reports duplicates and impossible selection bounds', () => {
    const { problems } = normaliseQuestions([
      { id: 'q_1', type: 'nps', text: 'a' },
      { id: 'q_1', type: 'text', text: 'b' },
      { type: 'multiple_choice', text: 'c', choices: [{ label: 'x' }, { label: 'y' }], minSelections: 3 },
    ]);
    expect(problems.map((p) => p.path)).toEqual(['/body/questions/1/id', '/body/questions/2/minSelections']);
  });
});

describe('validateAnswers', () => {
  it('accepts valid answers, and optional questions left out', () => {
    expect(check(validAnswers)).toEqual([]);
    expect(check(validAnswers.slice(0, 2))).toEqual([]);
  });

  const cases: Array<[string, Answer[], string[]]> = [
    ['an unknown question id', [...validAnswers, { questionId: 'q_99', value: 1 }], ['/body/answers/5/questionId']],
    ['two answers to one question', [...validAnswers, { questionId: 'q_1', value: 3 }], ['/body/answers/5/questionId']],
    ['a missing required answer', without('q_1'), ['/body/answers']],
    ['nps above 10', replace('q_1', 11), ['/body/answers/0/value']],
    ['nps below 0', replace('q_1', -1), ['/body/answers/0/value']],
    ['nps not an integer', replace('q_1', 7.5), ['/body/answers/0/value']],
    ['nps as a string', replace('q_1', '9'), ['/body/answers/0/value']],
    ['rating above max', replace('q_2', 6), ['/body/answers/1/value']],
    ['rating below min', replace('q_2', 0), ['/body/answers/1/value']],
    ['single_choice not a string', replace('q_3', 1), ['/body/answers/2/value']],
    ['single_choice with an unknown choice', replace('q_3', 'c_9'), ['/body/answers/2/value']],
    ['multiple_choice not an array', replace('q_4', 'c_1'), ['/body/answers/3/value']],
    ['multiple_choice with an unknown choice', replace('q_4', ['c_1', 'c_9']), ['/body/answers/3/value/1']],
    ['multiple_choice with a duplicate', replace('q_4', ['c_1', 'c_1']), ['/body/answers/3/value/1']],
    ['multiple_choice under minSelections', replace('q_4', []), ['/body/answers/3/value']],
    ['multiple_choice over maxSelections', replace('q_4', ['c_1', 'c_2', 'c_3']), ['/body/answers/3/value']],
    ['text not a string', replace('q_5', 5), ['/body/answers/4/value']],
    ['text longer than maxLength', replace('q_5', 'x'.repeat(21)), ['/body/answers/4/value']],
  ];
  for (const [name, answers, paths] of cases) {
    it(`reports ${name}`, () => {
      const problems = check(answers);
      expect(problems.map((p) => p.path)).toEqual(paths);
      for (const problem of problems) expect(problem.message.length).toBeGreaterThan(0);
    });
  }

  it('reports every problem at once', () => {
    const problems = check([
      { questionId: 'q_2', value: 9 },
      { questionId: 'q_3', value: 'nope' },
      { questionId: 'zz', value: 1 },
    ]);
    expect(problems.map((p) => p.path)).toEqual([
      '/body/answers/0/value',
      '/body/answers/1/value',
      '/body/answers/2/questionId',
      '/body/answers',
    ]);
    expect(problems.at(-1)?.message).toContain('q_1');
  });

  it('accepts text exactly at maxLength and rating at both ends', () => {
    expect(check(replace('q_5', 'x'.repeat(20)))).toEqual([]);
    expect(check(replace('q_2', 1))).toEqual([]);
    expect(check(replace('q_2', 5))).toEqual([]);
  });
});
