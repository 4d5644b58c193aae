/**
 * Display logic: which questions a respondent is shown, given their answers (`displayIf`), and the checks that keep
 * a survey's logic sound when it is written. Rules look only backwards, so one pass in question order decides
 * every question, and no logic can loop. Pure: the API's submission checks and the answer page share it.
 */
import type { DisplayCondition, DisplayRule, Question } from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/index.js';

/** The contract admits exactly one of `all` and `any`. */
const rulesOf = (condition: DisplayCondition): { kind: 'all' | 'any'; rules: DisplayRule[] } =>
  condition.all ? { kind: 'all', rules: condition.all } : { kind: 'any', rules: condition.any ?? [] };

const numeric = (q: Question) => q.type === 'nps' || q.type === 'rating' || q.type === 'number';
/** Questions whose answers no single value compares with: rules on them only ask whether they were answered. */
const presenceOnly = (q: Question) =>
  q.type === 'text' || q.type === 'matrix' || q.type === 'ranking' || q.type === 'date';
const chosen = (q: Question) => q.type === 'single_choice' || q.type === 'multiple_choice';

/** Whether a rule holds for an answer (`undefined`: unanswered, or its question is not shown). */
function holds(rule: DisplayRule, question: Question, answer: unknown): boolean {
  const value = rule.value;
  const selected = (id: unknown) =>
    question.type === 'multiple_choice' ? Array.isArray(answer) && answer.includes(id) : answer === id;
  switch (rule.op) {
    case 'answered':
      return answer !== undefined;
    case 'notAnswered':
      return answer === undefined;
    case 'equals':
      return answer !== undefined && selected(value);
    case 'notEquals':
      return !(answer !== undefined && selected(value));
    case 'in':
      return answer !== undefined && Array.isArray(value) && value.some((v) => selected(v));
    case 'gte':
      return typeof answer === 'number' && typeof value === 'number' && answer >= value;
    case 'lte':
      return typeof answer === 'number' && typeof value === 'number' && answer <= value;
  }
}

/**
 * The ids of the questions shown for these answers. An answer to a question that is not shown counts as none, so
 * hiding a question also hides what depends on it.
 */
export function displayedQuestions(questions: readonly Question[], answers: ReadonlyMap<string, unknown>): Set<string> {
  const shown = new Set<string>();
  const byId = new Map(questions.map((q) => [q.id, q]));
  for (const question of questions) {
    if (!question.displayIf) {
      shown.add(question.id);
      continue;
    }
    const { kind, rules } = rulesOf(question.displayIf);
    const results = rules.map((rule) => {
      const target = byId.get(rule.questionId);
      if (!target) return false;
      return holds(rule, target, shown.has(target.id) ? answers.get(target.id) : undefined);
    });
    if (kind === 'all' ? results.every(Boolean) : results.some(Boolean)) shown.add(question.id);
  }
  return shown;
}

/**
 * Every problem of the questions' logic, detail code `invalid_logic` at the rule's path: a rule on the question
 * itself, a later or unknown one, an `op` its question cannot take, a `value` of the wrong kind or an unknown
 * choice.
 */
export function logicProblems(questions: readonly Question[], basePath = '/body/questions'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const position = new Map(questions.map((q, i) => [q.id, i]));
  questions.forEach((question, i) => {
    if (!question.displayIf) return;
    const { kind, rules } = rulesOf(question.displayIf);
    rules.forEach((rule, j) => {
      const path = `${basePath}/${i}/displayIf/${kind}/${j}`;
      const problem = (message: string, at = path) => problems.push({ path: at, message, code: 'invalid_logic' });
      const at = position.get(rule.questionId);
      if (at === undefined) return problem(`no question "${rule.questionId}" in this survey`, `${path}/questionId`);
      if (at >= i) {
        return problem(
          `a rule may only refer to an earlier question; ${rule.questionId} is ${at === i ? 'this question' : 'a later one'}`,
          `${path}/questionId`,
        );
      }
      const target = questions[at]!;
      const needsValue = rule.op !== 'answered' && rule.op !== 'notAnswered';
      if (!needsValue) {
        if (rule.value !== undefined) problem(`${rule.op} takes no value`, `${path}/value`);
        return;
      }
      if (presenceOnly(target))
        return problem(
          `question ${target.id} is a ${target.type} question: only answered and notAnswered apply`,
          `${path}/op`,
        );
      if ((rule.op === 'gte' || rule.op === 'lte') && !numeric(target))
        return problem(
          `${rule.op} applies to nps, rating and number questions; ${target.id} is ${target.type}`,
          `${path}/op`,
        );
      if (rule.value === undefined) return problem(`${rule.op} needs a value`, `${path}/value`);
      const many = rule.op === 'in';
      if (many !== Array.isArray(rule.value))
        return problem(many ? 'in needs an array of values' : `${rule.op} needs a single value`, `${path}/value`);
      const values = Array.isArray(rule.value) ? rule.value : [rule.value];
      values.forEach((value, k) => {
        const valuePath = many ? `${path}/value/${k}` : `${path}/value`;
        if (numeric(target)) {
          if (typeof value !== 'number') problem(`question ${target.id} is answered with a number`, valuePath);
        } else if (chosen(target) && 'choices' in target) {
          const other = 'allowOther' in target && target.allowOther === true && value === 'other';
          if (typeof value !== 'string' || !(other || target.choices.some((c) => c.id === value)))
            problem(`question ${target.id} has no choice ${JSON.stringify(value)}`, valuePath);
        }
      });
    });
  });
  return problems;
}

/**
 * The source of `displayedQuestions` and what it calls, for the answer page's script: the browser decides what to
 * show with the very code the API's checks use, so the page and the API cannot disagree. Types are gone in the
 * compiled functions; `__name` is the helper some compilers wrap named functions in.
 */
export function displayLogicSource(): string {
  return [
    'var __name = function (target) { return target; };',
    `var rulesOf = ${String(rulesOf)};`,
    String(holds),
    String(displayedQuestions),
  ].join('\n');
}
