/**
 * Surveys in several languages. A survey's own strings are in its default language (the first of `languages`);
 * a translation carries another language's strings by id (question, choice, row, column), so answers, which
 * refer to ids, mean the same in every language. This file holds the pure rules: which language a respondent
 * gets, what a translation may name, which strings it lacks, and the one function that localises a survey.
 */
import type {
  Question,
  QuestionTranslation,
  SurveyTranslationInput as TranslationInput,
} from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/index.js';

export type { TranslationInput };

/** The survey's strings, as every shape of a survey (its row, the API's `Survey`, a version) carries them. */
export interface SurveyStrings {
  title: string;
  description: string | null;
  questions: Question[];
}

/** The parts of a question that translations address by id; read generically, so new question types need no case. */
interface QuestionParts {
  minLabel?: string | null;
  maxLabel?: string | null;
  scale?: { minLabel?: string | null; maxLabel?: string | null };
  choices?: { id: string; label: string }[];
  rows?: { id: string; text: string }[];
  columns?: { id: string; label: string }[];
}

const partsOf = (question: Question) => question as Question & QuestionParts;

/** BCP 47 tags compare without regard to case. */
const sameTag = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const primaryOf = (tag: string) => tag.split('-')[0]!.toLowerCase();

/** The survey's own spelling of `tag` when it lists it (case aside), else undefined. */
export function listedLanguage(languages: readonly string[], tag: string): string | undefined {
  return languages.find((language) => sameTag(language, tag));
}

/** A survey's languages for a message, kept short (a message has at most 1,000 characters). */
export function offeredLanguages(languages: readonly string[]): string {
  const list = languages.join(', ');
  return list.length > 200 ? `${list.slice(0, 199)}…` : list;
}

/** The first of the tags that repeats an earlier one (case aside), by index; -1 when all differ. */
export function repeatedLanguage(languages: readonly string[]): number {
  return languages.findIndex((tag, i) => languages.slice(0, i).some((earlier) => sameTag(earlier, tag)));
}

/**
 * The language a respondent gets: the first preference the survey offers, exactly or by its primary language
 * (`de-CH` gets `de`; `de` gets `de-DE` when that is the only German), else the survey's default.
 */
export function chooseLanguage(
  languages: readonly string[],
  preferences: readonly (string | null | undefined)[],
): string {
  for (const preference of preferences) {
    if (!preference) continue;
    const exact = listedLanguage(languages, preference);
    if (exact) return exact;
    const primary = languages.find((language) => primaryOf(language) === primaryOf(preference));
    if (primary) return primary;
  }
  return languages[0] ?? 'en';
}

/** The tags of an `Accept-Language` header, most wanted first (`q=0` and `*` left out). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .slice(0, 32)
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]{1,5})\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), weight: q === undefined ? 1 : Number(q), index };
    })
    .filter((item) => /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(item.tag) && item.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((item) => item.tag);
}

/**
 * Everything a translation names that its survey does not have, each at its path under `base`: a question, or
 * within a question a choice, row or column (or a kind of part the question has none of). Every problem at once.
 */
export function translationProblems(
  questions: readonly Question[],
  translation: TranslationInput,
  base = '/body',
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const [questionId, strings] of Object.entries(translation.questions)) {
    const at = `${base}/questions/${questionId}`;
    const question = questions.find((q) => q.id === questionId);
    if (!question) {
      problems.push({ path: at, code: 'not_found', message: `the survey has no question ${questionId}` });
      continue;
    }
    const parts = partsOf(question);
    const labelled = 'minLabel' in parts || parts.scale !== undefined;
    for (const label of ['minLabel', 'maxLabel'] as const) {
      if (strings[label] !== undefined && !labelled)
        problems.push({
          path: `${at}/${label}`,
          code: 'not_found',
          message: `question ${questionId} (${question.type}) has no scale labels`,
        });
    }
    const named: Array<['choices' | 'rows' | 'columns', string]> = [
      ['choices', 'choice'],
      ['rows', 'row'],
      ['columns', 'column'],
    ];
    for (const [member, noun] of named) {
      const given = strings[member];
      if (given === undefined) continue;
      const own = parts[member];
      if (!Array.isArray(own)) {
        problems.push({
          path: `${at}/${member}`,
          code: 'not_found',
          message: `question ${questionId} (${question.type}) has no ${member}`,
        });
        continue;
      }
      for (const id of Object.keys(given)) {
        if (!own.some((item) => item.id === id))
          problems.push({
            path: `${at}/${member}/${id}`,
            code: 'not_found',
            message: `question ${questionId} has no ${noun} ${id}`,
          });
      }
    }
  }
  return problems;
}

/** The JSON pointers of the survey's strings the translation lacks, in the survey's order. */
export function missingStrings(survey: SurveyStrings, translation: TranslationInput): string[] {
  const missing: string[] = [];
  const lacks = (own: string | null | undefined, translated: string | null | undefined) =>
    own !== null && own !== undefined && own !== '' && (translated === null || translated === undefined);
  if (lacks(survey.description, translation.description)) missing.push('/description');
  for (const question of survey.questions) {
    const parts = partsOf(question);
    const strings: Partial<QuestionTranslation> = translation.questions[question.id] ?? {};
    const at = `/questions/${question.id}`;
    if (!strings.text) missing.push(`${at}/text`);
    if (lacks(question.description, strings.description)) missing.push(`${at}/description`);
    for (const label of ['minLabel', 'maxLabel'] as const) {
      if (lacks(parts[label] ?? parts.scale?.[label], strings[label])) missing.push(`${at}/${label}`);
    }
    for (const member of ['choices', 'rows', 'columns'] as const) {
      for (const item of parts[member] ?? []) {
        if (strings[member]?.[item.id] === undefined) missing.push(`${at}/${member}/${item.id}`);
      }
    }
  }
  return missing;
}

/**
 * The survey as a respondent in the translation's language sees it: every user-visible string replaced by its
 * translation, the default language's where the translation lacks one. Ids, types, scales and rules stay, so
 * answers to the localised survey are answers to the survey. Without a translation, the survey itself.
 */
export function localizeSurvey<T extends SurveyStrings>(
  survey: T,
  translation: TranslationInput | null | undefined,
): T {
  if (!translation) return survey;
  const questions = survey.questions.map((question) => {
    const strings = translation.questions[question.id];
    if (!strings) return question;
    const parts = partsOf(question);
    const localized: Record<string, unknown> = { ...question, text: strings.text };
    if (strings.description != null && question.description != null) localized.description = strings.description;
    for (const label of ['minLabel', 'maxLabel'] as const) {
      const text = strings[label];
      if (text == null) continue;
      if (label in parts && parts[label] != null) localized[label] = text;
      if (parts.scale && parts.scale[label] != null)
        localized.scale = { ...(localized.scale ?? parts.scale), [label]: text };
    }
    if (parts.choices && strings.choices) {
      const labels = strings.choices;
      localized.choices = parts.choices.map((c) => ({ ...c, label: labels[c.id] ?? c.label }));
    }
    if (parts.rows && strings.rows) {
      const texts = strings.rows;
      localized.rows = parts.rows.map((r) => ({ ...r, text: texts[r.id] ?? r.text }));
    }
    if (parts.columns && strings.columns) {
      const labels = strings.columns;
      localized.columns = parts.columns.map((c) => ({ ...c, label: labels[c.id] ?? c.label }));
    }
    return localized as Question;
  });
  return {
    ...survey,
    title: translation.title,
    description:
      translation.description != null && survey.description != null ? translation.description : survey.description,
    questions,
  };
}
