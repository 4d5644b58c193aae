/**
 * Checks a response's answers against the survey's questions and reports every problem at once (JSON
 * Pointers into the request body). Pure: no database, no HTTP, so each rule is tested on its own.
 */
import type { components } from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/errors.js';

type Question = components['schemas']['Question'];
export type Answer = components['schemas']['Answer'];

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

function checkValue(question: Question, value: unknown, path: string): ErrorDetail[] {
  const problem = (message: string, at = path): ErrorDetail[] => [{ path: at, message }];
  switch (question.type) {
    case 'nps':
      if (!isInteger(value) || value < 0 || value > 10) return problem(`question ${question.id} (nps) needs an integer from 0 to 10`);
      return [];
    case 'rating':
      if (!isInteger(value) || value < question.min || value > question.max) {
        return problem(`question ${question.id} (rating) needs an integer from ${question.min} to ${question.max}`);
      }
      return [];
    case 'single_choice':
      if (typeof value !== 'string') return problem(`question ${question.id} (single_choice) needs one choice id (a string)`);
      if (!question.choices.some((choice) => choice.id === value)) return problem(`question ${question.id} has no choice "${value}"`);
      return [];
    case 'multiple_choice': {
      if (!Array.isArray(value)) return problem(`question ${question.id} (multiple_choice) needs an array of choice ids`);
      const problems: ErrorDetail[] = [];
      const known = new Set(question.choices.map((choice) => choice.id));
      const seen = new Set<unknown>();
      value.forEach((item, j) => {
        if (seen.has(item)) problems.push({ path: `${path}/${j}`, message: `choice "${String(item)}" is selected twice` });
        else if (typeof item !== 'string' || !known.has(item)) problems.push({ path: `${path}/${j}`, message: `question ${question.id} has no choice "${String(item)}"` });
        seen.add(item);
      });
      if (question.minSelections !== null && value.length < question.minSelections) {
        problems.push({ path, message: `question ${question.id} needs at least ${question.minSelections} selections, got ${value.length}` });
      }
      if (question.maxSelections !== null && value.length > question.maxSelections) {
        problems.push({ path, message: `question ${question.id} allows at most ${question.maxSelections} selections, got ${value.length}` });
      }
      return problems;
    }
    case 'text':
      if (typeof value !== 'string') return problem(`question ${question.id} (text) needs a string`);
      if (value.length === 0) return problem(`question ${question.id} (text) needs at least 1 character`);
      if (value.length > question.maxLength) return problem(`question ${question.id} (text) allows at most ${question.maxLength} characters, got ${value.length}`);
      return [];
  }
}

export function validateAnswers(questions: readonly Question[], answers: readonly Answer[], basePath = '/body/answers'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const byId = new Map(questions.map((question) => [question.id, question]));
  const answered = new Set<string>();
  answers.forEach((answer, i) => {
    const question = byId.get(answer.questionId);
    if (!question) {
      problems.push({ path: `${basePath}/${i}/questionId`, message: `the survey has no question "${answer.questionId}"` });
      return;
    }
    if (answered.has(answer.questionId)) {
      problems.push({ path: `${basePath}/${i}/questionId`, message: `question ${answer.questionId} is answered more than once` });
      return;
    }
    answered.add(answer.questionId);
    problems.push(...checkValue(question, answer.value, `${basePath}/${i}/value`));
  });
  for (const question of questions) {
    if (question.required && !answered.has(question.id)) {
      problems.push({ path: basePath, message: `question ${question.id} is required but has no answer`, code: 'required' });
    }
  }
  return problems;
}
