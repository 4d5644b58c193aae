/**
 * Turns the client's questions (`QuestionInput`) into stored ones (`Question`): fills the defaults the
 * validator cannot apply inside `oneOf`, assigns missing question and choice ids (`q_<n>`, `c_<n>`, the first
 * numbers not used) and reports every problem the schema cannot express (duplicate ids, impossible selection
 * bounds). Pure, so it is tested on its own.
 */
import type { components } from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/errors.js';

export type Question = components['schemas']['Question'];
export type QuestionInput = components['schemas']['QuestionInput'];
export type SurveySettings = components['schemas']['SurveySettings'];
export type SurveySettingsInput = components['schemas']['SurveySettingsInput'];
type Choice = components['schemas']['Choice'];
type ChoiceInput = components['schemas']['ChoiceInput'];

export const defaultSettings: SurveySettings = { anonymous: false, allowMultipleResponses: false };

export function mergeSettings(base: SurveySettings, input: SurveySettingsInput | undefined): SurveySettings {
  return {
    anonymous: input?.anonymous ?? base.anonymous,
    allowMultipleResponses: input?.allowMultipleResponses ?? base.allowMultipleResponses,
  };
}

/** Ids given explicitly must be unique; the others get `<prefix><n>` with the smallest n not taken. */
function assignIds<T extends { id?: string }>(
  items: readonly T[],
  prefix: string,
  path: (index: number) => string,
  problems: ErrorDetail[],
  what: string,
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
    while (taken.has(`${prefix}${next}`)) next++;
    const id = `${prefix}${next}`;
    taken.add(id);
    return id;
  });
}

function normaliseChoices(choices: readonly ChoiceInput[], questionPath: string, problems: ErrorDetail[]): Choice[] {
  const ids = assignIds(choices, 'c_', (j) => `${questionPath}/choices/${j}/id`, problems, 'choice');
  return choices.map((choice, j) => ({ id: ids[j]!, label: choice.label }));
}

export function normaliseQuestions(
  inputs: readonly QuestionInput[],
  basePath = '/body/questions',
): { questions: Question[]; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const ids = assignIds(inputs, 'q_', (i) => `${basePath}/${i}/id`, problems, 'question');
  const questions = inputs.map((input, i): Question => {
    const path = `${basePath}/${i}`;
    const common = {
      id: ids[i]!,
      text: input.text,
      description: input.description ?? null,
      required: input.required ?? true,
    };
    switch (input.type) {
      case 'nps':
        return { ...common, type: 'nps' };
      case 'rating':
        return {
          ...common,
          type: 'rating',
          min: input.min ?? 1,
          max: input.max ?? 5,
          minLabel: input.minLabel ?? null,
          maxLabel: input.maxLabel ?? null,
        };
      case 'single_choice':
        return { ...common, type: 'single_choice', choices: normaliseChoices(input.choices, path, problems) };
      case 'multiple_choice': {
        const choices = normaliseChoices(input.choices, path, problems);
        const minSelections = input.minSelections ?? null;
        const maxSelections = input.maxSelections ?? null;
        if (minSelections !== null && maxSelections !== null && minSelections > maxSelections) {
          problems.push({
            path: `${path}/minSelections`,
            message: `minSelections (${minSelections}) must not exceed maxSelections (${maxSelections})`,
            code: 'out_of_range',
          });
        }
        if (minSelections !== null && minSelections > choices.length) {
          problems.push({
            path: `${path}/minSelections`,
            message: `minSelections (${minSelections}) exceeds the number of choices (${choices.length})`,
            code: 'out_of_range',
          });
        }
        return { ...common, type: 'multiple_choice', choices, minSelections, maxSelections };
      }
      case 'text':
        return { ...common, type: 'text', maxLength: input.maxLength ?? 2000 };
    }
  });
  return { questions, problems };
}
