/**
 * Turns the client's questions (`QuestionInput`) into stored ones (`Question`): fills the defaults the
 * validator cannot apply inside `oneOf`, assigns missing question and choice ids (`q_<n>`, `c_<n>`, the first
 * numbers not used) and reports every problem the schema cannot express (duplicate ids, impossible selection
 * bounds). Pure, so it is tested on its own.
 */
import type {
  Choice,
  ChoiceInput,
  Question,
  QuestionInput,
  SurveySettings,
  SurveySettingsInput,
} from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/index.js';
import { logicProblems } from './display-logic.js';

export type { Question, QuestionInput, SurveySettings, SurveySettingsInput };

export type SurveyPrivacy = SurveySettings['privacy'];

export const defaultSettings: SurveySettings = {
  privacy: 'identified',
  anonymous: false,
  allowMultipleResponses: false,
};

/**
 * The settings after `input`. `anonymous` is the original spelling of `privacy: anonymous`, kept in step with it:
 * `anonymous: false` alone leaves a confidential survey confidential and makes an anonymous one identified.
 */
export function mergeSettings(base: SurveySettings, input: SurveySettingsInput | undefined): SurveySettings {
  const notAnonymous = base.privacy === 'anonymous' ? 'identified' : base.privacy;
  const privacy =
    input?.privacy ?? (input?.anonymous === undefined ? base.privacy : input.anonymous ? 'anonymous' : notAnonymous);
  return {
    privacy,
    anonymous: privacy === 'anonymous',
    allowMultipleResponses: input?.allowMultipleResponses ?? base.allowMultipleResponses,
  };
}

/** `privacy` and `anonymous` sent together must say the same. */
export function settingsProblems(input: SurveySettingsInput | undefined): ErrorDetail[] {
  if (input?.privacy === undefined || input.anonymous === undefined) return [];
  if (input.anonymous === (input.privacy === 'anonymous')) return [];
  return [
    {
      path: '/body/settings/anonymous',
      code: 'invalid_value',
      message: `must be ${input.privacy === 'anonymous'} with privacy "${input.privacy}" (anonymous is true exactly when privacy is "anonymous")`,
    },
  ];
}

/** Whether responses show who answered: only in an identified survey (a confidential one keeps it unseen). */
export const showsIdentity = (settings: SurveySettings) => settings.privacy === 'identified';

/** Ids given explicitly must be unique; the others get `<prefix><n>` with the smallest n not taken. */
function assignIds<T extends { id?: string }>(
  items: readonly T[],
  prefix: string,
  path: (index: number) => string,
  problems: ErrorDetail[],
  what: string,
  reserved: ReadonlySet<string> = new Set(),
): string[] {
  const taken = new Set<string>();
  items.forEach((item, index) => {
    if (item.id === undefined) return;
    if (taken.has(item.id))
      problems.push({ path: path(index), message: `duplicate ${what} id "${item.id}"`, code: 'duplicate' });
    taken.add(item.id);
  });
  let next = 1;
  return items.map((item) => {
    if (item.id !== undefined) return item.id;
    while (taken.has(`${prefix}${next}`) || reserved.has(`${prefix}${next}`)) next++;
    const id = `${prefix}${next}`;
    taken.add(id);
    return id;
  });
}

function normaliseChoices(
  choices: readonly ChoiceInput[],
  questionPath: string,
  problems: ErrorDetail[],
  member = 'choices',
): Choice[] {
  const ids = assignIds(choices, 'c_', (j) => `${questionPath}/${member}/${j}/id`, problems, 'choice');
  return choices.map((choice, j) => ({ id: ids[j]!, label: choice.label }));
}

/** The id an answer gives the "Other" entry of a question with `allowOther`: no choice of it may take the id. */
export const OTHER_CHOICE_ID = 'other';

function otherOption(
  choices: readonly Choice[],
  allowOther: boolean | undefined,
  questionPath: string,
  problems: ErrorDetail[],
): { allowOther: boolean } {
  const index = choices.findIndex((choice) => choice.id === OTHER_CHOICE_ID);
  if (allowOther === true && index >= 0)
    problems.push({
      path: `${questionPath}/choices/${index}/id`,
      message: `the choice id "${OTHER_CHOICE_ID}" names the "Other" entry of a question with allowOther; give this choice another id`,
      code: 'duplicate',
    });
  return { allowOther: allowOther === true };
}

function normaliseMatrix(
  input: Extract<QuestionInput, { type: 'matrix' }>,
  path: string,
  problems: ErrorDetail[],
): Pick<Extract<Question, { type: 'matrix' }>, 'rows' | 'scale' | 'columns' | 'allowNotApplicable'> {
  const rowIds = assignIds(input.rows, 'r_', (j) => `${path}/rows/${j}/id`, problems, 'row');
  const rows = input.rows.map((row, j) => ({ id: rowIds[j]!, text: row.text }));
  // `null` is the side a matrix does not use, as a survey read with GET shows it.
  if ((input.scale == null) === (input.columns == null))
    problems.push({
      path,
      message: 'a matrix question has either a numeric scale or labelled columns: give exactly one of them',
      code: 'one_of',
    });
  const scale = input.scale
    ? {
        min: input.scale.min ?? 1,
        max: input.scale.max,
        minLabel: input.scale.minLabel ?? null,
        maxLabel: input.scale.maxLabel ?? null,
      }
    : null;
  const columns = input.columns ? normaliseChoices(input.columns, path, problems, 'columns') : null;
  return { rows, scale, columns, allowNotApplicable: input.allowNotApplicable ?? false };
}

function normaliseBounds<T extends number | string>(
  min: T | null,
  max: T | null,
  path: string,
  problems: ErrorDetail[],
) {
  if (min !== null && max !== null && min > max)
    problems.push({ path: `${path}/min`, message: `min (${min}) must not exceed max (${max})`, code: 'out_of_range' });
  return { min, max };
}

/**
 * A key names what a question measures across surveys (trends, `previousCycle`), so within one survey it must name
 * one question: every repeat after the first is a problem at its own path.
 */
function duplicateKeys(inputs: readonly QuestionInput[], basePath: string): ErrorDetail[] {
  const firstAt = new Map<string, number>();
  const problems: ErrorDetail[] = [];
  inputs.forEach((input, i) => {
    if (typeof input.key !== 'string') return;
    const first = firstAt.get(input.key);
    if (first === undefined) firstAt.set(input.key, i);
    else
      problems.push({
        path: `${basePath}/${i}/key`,
        message: `duplicate question key "${input.key}" (also question ${first}); a key names one question of a survey`,
        code: 'duplicate',
      });
  });
  return problems;
}

/** Present only when allowed, so that questions stored before N/A existed read the same. */
const notApplicable = (allowed: boolean | undefined) => (allowed === true ? { allowNotApplicable: true } : {});

export function normaliseQuestions(
  inputs: readonly QuestionInput[],
  basePath = '/body/questions',
  /** Ids a new question must not get: a launched survey's, so that a new question never passes for an old one. */
  reservedIds: ReadonlySet<string> = new Set(),
): { questions: Question[]; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const ids = assignIds(inputs, 'q_', (i) => `${basePath}/${i}/id`, problems, 'question', reservedIds);
  problems.push(...duplicateKeys(inputs, basePath));
  const questions = inputs.map((input, i): Question => {
    const path = `${basePath}/${i}`;
    const common = {
      id: ids[i]!,
      // Absent rather than null when none, so that questions stored before keys existed read the same.
      ...(typeof input.key === 'string' ? { key: input.key } : {}),
      text: input.text,
      description: input.description ?? null,
      required: input.required ?? true,
      ...(input.displayIf ? { displayIf: input.displayIf } : {}),
    };
    switch (input.type) {
      case 'nps':
        return { ...common, type: 'nps', ...notApplicable(input.allowNotApplicable) };
      case 'rating':
        return {
          ...common,
          type: 'rating',
          min: input.min ?? 1,
          max: input.max ?? 5,
          minLabel: input.minLabel ?? null,
          maxLabel: input.maxLabel ?? null,
          ...notApplicable(input.allowNotApplicable),
        };
      case 'single_choice': {
        const choices = normaliseChoices(input.choices, path, problems);
        return { ...common, type: 'single_choice', choices, ...otherOption(choices, input.allowOther, path, problems) };
      }
      case 'multiple_choice': {
        const choices = normaliseChoices(input.choices, path, problems);
        const other = otherOption(choices, input.allowOther, path, problems);
        const entries = choices.length + (other.allowOther ? 1 : 0);
        const minSelections = input.minSelections ?? null;
        const maxSelections = input.maxSelections ?? null;
        if (minSelections !== null && maxSelections !== null && minSelections > maxSelections) {
          problems.push({
            path: `${path}/minSelections`,
            message: `minSelections (${minSelections}) must not exceed maxSelections (${maxSelections})`,
            code: 'out_of_range',
          });
        }
        if (minSelections !== null && minSelections > entries) {
          problems.push({
            path: `${path}/minSelections`,
            message: `minSelections (${minSelections}) exceeds the number of choices (${entries})`,
            code: 'out_of_range',
          });
        }
        return { ...common, type: 'multiple_choice', choices, minSelections, maxSelections, ...other };
      }
      case 'text':
        return { ...common, type: 'text', maxLength: input.maxLength ?? 2000 };
      case 'matrix':
        return { ...common, type: 'matrix', ...normaliseMatrix(input, path, problems) };
      case 'ranking':
        return { ...common, type: 'ranking', choices: normaliseChoices(input.choices, path, problems) };
      case 'number':
        return {
          ...common,
          type: 'number',
          ...normaliseBounds(input.min ?? null, input.max ?? null, path, problems),
          integer: input.integer ?? false,
        };
      case 'date':
        return { ...common, type: 'date', ...normaliseBounds(input.min ?? null, input.max ?? null, path, problems) };
    }
  });
  problems.push(...logicProblems(questions, basePath));
  return { questions, problems };
}

/**
 * What may change in a launched question: the words people read, its choices' labels (checked apart), when it
 * is shown (a question shown to fewer people is answered by fewer; no answer changes meaning), and its `key`
 * (which cycle series the question belongs to is a label across surveys, read when trends are asked; no stored
 * answer or count depends on it).
 */
const rewordable = new Set([
  'id',
  'key',
  'text',
  'description',
  'minLabel',
  'maxLabel',
  'choices',
  'rows',
  'columns',
  'displayIf',
]);
/** JSON with object keys sorted: questions read back from jsonb come with their keys in jsonb's order, not ours. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
const sameValue = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

const scaleBounds = (scale: unknown) =>
  scale && typeof scale === 'object'
    ? { min: (scale as { min: unknown }).min, max: (scale as { max: unknown }).max }
    : scale;

/** Whether two question lists are the same, whatever order their objects' keys come in. */
export const sameQuestions = (a: readonly Question[], b: readonly Question[]) => sameValue(a, b);

/**
 * The problems of a change to a launched survey's questions, one detail each; none when every earlier answer keeps
 * its meaning. Launched questions keep their place, type, scale and rules, and their choices keep their place; new
 * choices and new optional questions come after them. Places matter beyond display: analytics encode an answer by
 * its question's and choice's positions (`analytics_encode`), so a response of any version counts under the same
 * codes.
 */
export function changesAfterLaunch(
  launched: readonly Question[],
  next: readonly Question[],
  basePath = '/body/questions',
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  launched.forEach((before, i) => {
    const after = next[i];
    const path = `${basePath}/${i}`;
    if (!after || after.id !== before.id) {
      problems.push({
        path,
        message: `question ${before.id} was removed or moved; launched questions keep their place (add new ones after them, with their ids)`,
        code: 'question_moved',
      });
      return;
    }
    if (after.type !== before.type) {
      problems.push({
        path: `${path}/type`,
        message: `the type of question ${before.id} cannot change after the launch (was ${before.type})`,
        code: 'type_changed',
      });
      return;
    }
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys) {
      if (rewordable.has(key)) continue;
      const was = (before as Record<string, unknown>)[key];
      const now = (after as Record<string, unknown>)[key];
      // A matrix scale's labels are words; its bounds are what answers mean.
      if (key === 'scale' ? sameValue(scaleBounds(was), scaleBounds(now)) : sameValue(was, now)) continue;
      const code =
        key === 'min' || key === 'max' || key === 'scale'
          ? 'scale_changed'
          : key === 'required'
            ? 'required_changed'
            : 'rule_changed';
      problems.push({
        path: `${path}/${key}`,
        message: `the ${key} of question ${before.id} cannot change after the launch (was ${JSON.stringify(was) ?? 'absent'})`,
        code,
      });
    }
    for (const member of ['choices', 'rows', 'columns'] as const) {
      const was = (before as Partial<Record<typeof member, { id: string }[] | null>>)[member] ?? [];
      const now = (after as Partial<Record<typeof member, { id: string }[] | null>>)[member] ?? [];
      was.forEach((item, j) => {
        if (now[j]?.id !== item.id)
          problems.push({
            path: `${path}/${member}/${j}`,
            message: `${member === 'choices' ? 'choice' : member === 'rows' ? 'row' : 'column'} ${item.id} of question ${before.id} was removed or moved; add new ones after the existing ones`,
            code: 'choice_moved',
          });
      });
      // A ranking's answer names every choice, so a new choice would make every earlier answer incomplete.
      if (member === 'choices' && before.type === 'ranking' && now.length !== was.length)
        problems.push({
          path: `${path}/choices`,
          message: `the choices of ranking question ${before.id} cannot change in number after the launch: every answer ranks all of them`,
          code: 'rule_changed',
        });
    }
  });
  next.slice(launched.length).forEach((added, k) => {
    if (added.required) {
      problems.push({
        path: `${basePath}/${launched.length + k}/required`,
        message: `new question ${added.id} must be optional (required: false): earlier respondents never saw it`,
        code: 'new_question_required',
      });
    }
  });
  return problems;
}
