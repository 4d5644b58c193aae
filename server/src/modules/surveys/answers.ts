/**
 * Checks a response's answers against the survey's questions and reports every problem at once (JSON
 * Pointers into the request body). Pure: no database, no HTTP, so each rule is tested on its own.
 */
import type { Answer, Question } from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/index.js';
import { displayedQuestions } from './display-logic.js';
import { OTHER_CHOICE_ID } from './questions.js';

export type { Answer };

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

/** The bound answers of `number` questions stay within: beyond it a float no longer holds every integer. */
export const NUMBER_LIMIT = 1e12;

/** The days analytics count exactly (days since 1900-01-01 in a cell's five digits, see the encoding). */
export const EARLIEST_DATE = '1900-01-01';
export const LATEST_DATE = '2170-12-31';

const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Whether a `YYYY-MM-DD` string names a day of the calendar (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  const match = isoDate.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const allowsNotApplicable = (question: Question) =>
  'allowNotApplicable' in question && question.allowNotApplicable === true;
const allowsOther = (question: Question) => 'allowOther' in question && question.allowOther === true;

/** The "Other" text beside a choice answer: present exactly when the answer selects `other`. */
function checkOther(question: Question, answer: Answer, path: string): ErrorDetail[] {
  const selectsOther =
    question.type === 'single_choice'
      ? answer.value === OTHER_CHOICE_ID
      : question.type === 'multiple_choice' && Array.isArray(answer.value) && answer.value.includes(OTHER_CHOICE_ID);
  if (answer.other !== undefined && !allowsOther(question))
    return [
      {
        path: `${path}/other`,
        message: `question ${question.id} has no "Other" entry (allowOther is not set), so it takes no other text`,
        code: 'other_not_allowed',
      },
    ];
  if (!allowsOther(question)) return [];
  if (selectsOther && answer.other === undefined)
    return [
      {
        path: `${path}/other`,
        message: `"Other" is selected in question ${question.id}: give its text in other`,
        code: 'required',
      },
    ];
  if (!selectsOther && answer.other !== undefined)
    return [
      {
        path: `${path}/other`,
        message: `other text is given but question ${question.id}'s answer does not select "${OTHER_CHOICE_ID}"`,
        code: 'other_not_selected',
      },
    ];
  return [];
}

function checkMatrix(question: Extract<Question, { type: 'matrix' }>, value: unknown, path: string): ErrorDetail[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [
      {
        path,
        message: `question ${question.id} is a matrix question: answer with an object of row ids, got ${describe(value)}`,
        code: 'answer_type',
      },
    ];
  const problems: ErrorDetail[] = [];
  const rows = new Set(question.rows.map((row) => row.id));
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0)
    problems.push({
      path,
      message: `answer at least one row of question ${question.id}, or leave the answer out`,
      code: 'out_of_range',
    });
  for (const [rowId, cell] of entries) {
    const at = `${path}/${rowId.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!rows.has(rowId)) {
      problems.push({ path: at, message: `question ${question.id} has no row "${clip(rowId)}"`, code: 'not_found' });
      continue;
    }
    if (cell === null) {
      if (!question.allowNotApplicable)
        problems.push({ path: at, message: `question ${question.id} does not allow N/A (null)`, code: 'answer_type' });
      continue;
    }
    if (question.scale) {
      const { min, max } = question.scale;
      if (typeof cell !== 'number')
        problems.push({
          path: at,
          message: `rows of question ${question.id} take an integer from ${min} to ${max}, got ${describe(cell)}`,
          code: 'answer_type',
        });
      else if (!isInteger(cell) || cell < min || cell > max)
        problems.push({
          path: at,
          message: `rows of question ${question.id} take an integer from ${min} to ${max}, got ${cell}`,
          code: 'out_of_range',
        });
    } else if (typeof cell !== 'string')
      problems.push({
        path: at,
        message: `rows of question ${question.id} take a column id (a string), got ${describe(cell)}`,
        code: 'answer_type',
      });
    else if (!(question.columns ?? []).some((column) => column.id === cell))
      problems.push({ path: at, message: `question ${question.id} has no column "${clip(cell)}"`, code: 'not_found' });
  }
  if (question.required) {
    const missing = question.rows.filter((row) => !(row.id in (value as object))).map((row) => row.id);
    if (missing.length > 0)
      problems.push({
        path,
        message: `question ${question.id} is required: answer every row (missing: ${missing.join(', ')})`,
        code: 'required',
      });
  }
  return problems;
}

/** The items of a list of choice ids (a multiple choice, a ranking): each a known id, none twice. */
function choiceListProblems(
  questionId: string,
  known: ReadonlySet<string>,
  value: readonly unknown[],
  path: string,
  verb: 'selected' | 'ranked',
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const seen = new Set<unknown>();
  value.forEach((item, j) => {
    if (seen.has(item))
      problems.push({
        path: `${path}/${j}`,
        message: `choice "${clip(String(item))}" is ${verb} twice`,
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
        message: `question ${questionId} has no choice "${clip(item)}"`,
        code: 'not_found',
      });
    seen.add(item);
  });
  return problems;
}

function checkRanking(question: Extract<Question, { type: 'ranking' }>, value: unknown, path: string): ErrorDetail[] {
  if (!Array.isArray(value))
    return [
      {
        path,
        message: `question ${question.id} is a ranking question: answer with an array of every choice id, got ${describe(value)}`,
        code: 'answer_type',
      },
    ];
  const problems = choiceListProblems(question.id, new Set(question.choices.map((c) => c.id)), value, path, 'ranked');
  const given = new Set<unknown>(value);
  const missing = question.choices.filter((choice) => !given.has(choice.id)).map((choice) => choice.id);
  if (missing.length > 0)
    problems.push({
      path,
      message: `a ranking orders every choice of question ${question.id}; missing: ${missing.join(', ')}`,
      code: 'required',
    });
  return problems;
}

function checkValue(question: Question, value: unknown, path: string): ErrorDetail[] {
  const problem = (code: string, message: string, at = path): ErrorDetail[] => [{ path: at, message, code }];
  if (value === null && question.type !== 'matrix') {
    return allowsNotApplicable(question)
      ? []
      : problem('answer_type', `question ${question.id} does not take N/A (null): it has no allowNotApplicable`);
  }
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
      if (
        !question.choices.some((choice) => choice.id === value) &&
        !(allowsOther(question) && value === OTHER_CHOICE_ID)
      )
        return problem('not_found', `question ${question.id} has no choice "${clip(value)}"`);
      return [];
    case 'multiple_choice': {
      if (!Array.isArray(value))
        return problem(
          'answer_type',
          `question ${question.id} is a multiple_choice question: answer with an array of choice ids, got ${describe(value)}`,
        );
      const known = new Set(question.choices.map((choice) => choice.id));
      if (allowsOther(question)) known.add(OTHER_CHOICE_ID);
      const problems = choiceListProblems(question.id, known, value, path, 'selected');
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
    case 'matrix':
      return checkMatrix(question, value, path);
    case 'ranking':
      return checkRanking(question, value, path);
    case 'number': {
      const { min, max } = question;
      if (typeof value !== 'number')
        return problem(
          'answer_type',
          `question ${question.id} is a number question: answer with a JSON number, got ${describe(value)}`,
        );
      if (!Number.isFinite(value) || Math.abs(value) > NUMBER_LIMIT)
        return problem('out_of_range', `question ${question.id} (number) takes numbers within ±${NUMBER_LIMIT}`);
      if (question.integer && !Number.isInteger(value))
        return problem('out_of_range', `question ${question.id} (number) takes a whole number, got ${value}`);
      if ((min !== null && value < min) || (max !== null && value > max))
        return problem(
          'out_of_range',
          `question ${question.id} (number) takes a number from ${min ?? '−∞'} to ${max ?? '∞'}, got ${value}`,
        );
      return [];
    }
    case 'date': {
      if (typeof value !== 'string')
        return problem(
          'answer_type',
          `question ${question.id} is a date question: answer with YYYY-MM-DD, got ${describe(value)}`,
        );
      if (!isCalendarDate(value))
        return problem(
          'format',
          `question ${question.id} takes a date of the calendar as YYYY-MM-DD, got "${clip(value)}"`,
        );
      if ((question.min !== null && value < question.min) || (question.max !== null && value > question.max))
        return problem(
          'out_of_range',
          `question ${question.id} (date) takes a date from ${question.min ?? 'any day'} to ${question.max ?? 'any day'}, got ${value}`,
        );
      return [];
    }
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
    problems.push(...checkOther(question, answer, `${basePath}/${i}`));
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
