/**
 * Checks a response's answers against the survey's questions and reports every problem at once (JSON
 * Pointers into the request body). Pure: no database, no HTTP, so each rule is tested on its own.
 */
import type { components } from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/errors.js';
import { displayedQuestions } from './display-logic.js';

type Question = components['schemas']['Question'];
export type Answer = components['schemas']['Answer'];

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

function checkValue(question: Question, value: unknown, path: string): ErrorDetail[] {
  const problem = (code: string, message: string, at = path): ErrorDetail[] => [{ path: at, message, code }];
  // A value of the wrong kind is `answer_type` (and says what the question takes); a value of the right kind
  // outside the question's bounds is `out_of_range`.
  switch (question.type) {
    case 'nps':
      if (typeof value !== 'number')
        return problem(
          'answer_type',
          `question ${question.id} is an nps question: answer with an integer from 0 to 10, got ${describe(value)}`,
        );
      if (!isInteger(value) || value < 0 || value > 10)
        return problem('out_of_range', `question ${question.id} (nps) needs an integer from 0 to 10, got ${value}`);
      return [];
    case 'rating':
      if (typeof value !== 'number') {
        return problem(
          'answer_type',
          `question ${question.id} is a rating question: answer with an integer from ${question.min} to ${question.max}, got ${describe(value)}`,
        );
      }
      if (!isInteger(value) || value < question.min || value > question.max) {
        return problem(
          'out_of_range',
          `question ${question.id} (rating) needs an integer from ${question.min} to ${question.max}, got ${value}`,
        );
      }
      return [];
    case 'single_choice':
      if (typeof value !== 'string')
        return problem(
          'answer_type',
          `question ${question.id} is a single_choice question: answer with one choice id (a string), got ${describe(value)}`,
        );
      if (!question.choices.some((choice) => choice.id === value))
        return problem('not_found', `question ${question.id} has no choice "${clip(value)}"`);
      return [];
    case 'multiple_choice': {
      if (!Array.isArray(value))
        return problem(
          'answer_type',
          `question ${question.id} is a multiple_choice question: answer with an array of choice ids, got ${describe(value)}`,
        );
      const problems: ErrorDetail[] = [];
      const known = new Set(question.choices.map((choice) => choice.id));
      const seen = new Set<unknown>();
      value.forEach((item, j) => {
        if (seen.has(item))
          problems.push({
            path: `${path}/${j}`,
            message: `choice "${clip(String(item))}" is selected twice`,
            code: 'duplicate',
          });
        else if (typeof item !== 'string')
          problems.push({
            path: `${path}/${j}`,
            message: `choice ids are strings, got ${describe(item)}`,
            code: 'answer_type',
          });
        else if (!known.has(item))
          problems.push({
            path: `${path}/${j}`,
            message: `question ${question.id} has no choice "${clip(item)}"`,
            code: 'not_found',
          });
        seen.add(item);
      });
      if (question.minSelections !== null && value.length < question.minSelections) {
        problems.push({
          path,
          message: `question ${question.id} needs at least ${question.minSelections} selections, got ${value.length}`,
          code: 'out_of_range',
        });
      }
      if (question.maxSelections !== null && value.length > question.maxSelections) {
        problems.push({
          path,
          message: `question ${question.id} allows at most ${question.maxSelections} selections, got ${value.length}`,
          code: 'out_of_range',
        });
      }
      return problems;
    }
    case 'text':
      if (typeof value !== 'string')
        return problem(
          'answer_type',
          `question ${question.id} is a text question: answer with a string, got ${describe(value)}`,
        );
      if (value.length === 0)
        return problem('out_of_range', `question ${question.id} (text) needs at least 1 character`);
      if (value.length > question.maxLength)
        return problem(
          'out_of_range',
          `question ${question.id} (text) allows at most ${question.maxLength} characters, got ${value.length}`,
        );
      return [];
  }
}

/** The JSON type of a value, for messages ("a string", "an array"). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object'
    ? 'an object'
    : type === 'number'
      ? `the number ${value}`
      : type === 'boolean'
        ? `the boolean ${value}`
        : 'a string';
}

/** Echoed values are cut short: a message must stay readable (and within ErrorDetail's 1,000 characters). */
function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

export function validateAnswers(
  questions: readonly Question[],
  answers: readonly Answer[],
  basePath = '/body/answers',
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const byId = new Map(questions.map((question) => [question.id, question]));
  const answered = new Set<string>();
  answers.forEach((answer, i) => {
    const question = byId.get(answer.questionId);
    if (!question) {
      problems.push({
        path: `${basePath}/${i}/questionId`,
        message: `the survey has no question "${clip(answer.questionId)}"`,
        code: 'not_found',
      });
      return;
    }
    if (answered.has(answer.questionId)) {
      problems.push({
        path: `${basePath}/${i}/questionId`,
        message: `question ${answer.questionId} is answered more than once`,
        code: 'duplicate',
      });
      return;
    }
    answered.add(answer.questionId);
    problems.push(...checkValue(question, answer.value, `${basePath}/${i}/value`));
  });
  // Display logic: a question not shown takes no answer and is never required.
  const given = new Map(answers.filter((a) => byId.has(a.questionId)).map((a) => [a.questionId, a.value]));
  const shown = displayedQuestions(questions, given);
  answers.forEach((answer, i) => {
    if (byId.has(answer.questionId) && !shown.has(answer.questionId)) {
      problems.push({
        path: `${basePath}/${i}/questionId`,
        message: `question ${answer.questionId} is not shown for these answers (its displayIf does not hold), so it takes no answer`,
        code: 'answer_not_displayed',
      });
    }
  });
  for (const question of questions) {
    if (question.required && shown.has(question.id) && !answered.has(question.id)) {
      problems.push({
        path: basePath,
        message: `question ${question.id} is required but has no answer`,
        code: 'required',
      });
    }
  }
  return problems;
}
