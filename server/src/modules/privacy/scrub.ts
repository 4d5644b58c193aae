/**
 * What a person's erasure does to the copies of their data inside other records: event payloads (and so the
 * bodies of their webhook deliveries, which are the payloads), AI analysis results, and sync errors. Pure
 * functions: the same person and record give the same decision in a dry run and in the real run, and the inventory
 * counts a record by the same test (`…Holds`) whatever the scope.
 */
import type { ErasureScope } from './tables.js';

/** The person as the copies may show them. */
export interface Person {
  externalIds: ReadonlySet<string>;
  responseIds: ReadonlySet<string>;
  /** Their free text (text answers and "Other" texts), by survey: what an AI quote of them would be cut from. */
  texts: ReadonlyMap<string, readonly string[]>;
}

export type Plan<T> = { kind: 'keep' } | { kind: 'delete' } | { kind: 'replace'; data: T };

const keep = { kind: 'keep' } as const;

// ---------------------------------------------------------------------------------------------------------------
// AI quotes

/** The placeholders the AI module's redactor writes into quotes instead of e-mails, phones, URLs and names. */
const PLACEHOLDER = /\[(?:email|phone|url|name)\]/;

/**
 * Whether `quote` is an excerpt of `text`. Quotes are verbatim excerpts of the redacted answers, so apart from
 * the placeholders the redactor put where the text had an address, a number or a name, the quote's pieces appear in
 * the text, in order. A quote that is only placeholders cannot be told apart from anyone's and is not taken.
 */
export function quotes(quote: string, text: string): boolean {
  const pieces = quote
    .split(PLACEHOLDER)
    .map((piece) => piece.trim())
    .filter((piece) => piece.length > 0);
  if (pieces.length === 0) return false;
  let at = 0;
  for (const piece of pieces) {
    const found = text.indexOf(piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return true;
}

interface Theme {
  name: string;
  mentions: number;
  share: number;
  responseIds: string[];
  sampleQuotes: string[];
  [other: string]: unknown;
}

interface AnalysisResult {
  surveyId?: string;
  themes?: Theme[];
  responseSentiments?: { responseId: string }[];
  actions?: { text: string; basis: string; theme: string | null }[];
  recommendations?: string[];
  anonymity?: { threshold: number; suppressedThemes: number; [other: string]: unknown };
  [other: string]: unknown;
}

const asResult = (value: unknown): AnalysisResult =>
  typeof value === 'object' && value !== null ? (value as AnalysisResult) : {};

const quotesPerson = (quote: string, texts: readonly string[]) => texts.some((text) => quotes(quote, text));

/** Whether an AI result (of survey `surveyId`) quotes the person's text or lists one of their responses. */
export function analysisHolds(value: unknown, surveyId: string, person: Person): boolean {
  const result = asResult(value);
  const texts = person.texts.get(surveyId) ?? [];
  return (
    (result.themes ?? []).some(
      (theme) =>
        theme.responseIds.some((id) => person.responseIds.has(id)) ||
        theme.sampleQuotes.some((quote) => quotesPerson(quote, texts)),
    ) || (result.responseSentiments ?? []).some((entry) => person.responseIds.has(entry.responseId))
  );
}

/**
 * The result without the person: quotes of their text go (every scope); with their responses
 * (`identity_and_responses`), their response ids go from the themes and the per-response sentiment, and a theme
 * left with fewer responses than the threshold the analysis applied is dropped as the analysis itself drops one
 * (counted in `anonymity.suppressedThemes`, with the recommendations that followed from it). The summary and the
 * aggregate figures stay as computed; a new analysis computes them without the person.
 */
export function scrubAnalysis(
  value: unknown,
  surveyId: string,
  person: Person,
  scope: ErasureScope,
): Plan<AnalysisResult> {
  if (!analysisHolds(value, surveyId, person)) return keep;
  const result = asResult(value);
  const texts = person.texts.get(surveyId) ?? [];
  const dropResponses = scope === 'identity_and_responses';
  const threshold = result.anonymity?.threshold ?? 1;
  const sentimentsBefore = result.responseSentiments?.length ?? 0;
  const responseSentiments = dropResponses
    ? (result.responseSentiments ?? []).filter((entry) => !person.responseIds.has(entry.responseId))
    : result.responseSentiments;
  let dropped = 0;
  const droppedNames = new Set<string>();
  const themes: Theme[] = [];
  for (const theme of result.themes ?? []) {
    const responseIds = dropResponses
      ? theme.responseIds.filter((id) => !person.responseIds.has(id))
      : theme.responseIds;
    if (responseIds.length < theme.responseIds.length && responseIds.length < threshold) {
      dropped += 1;
      droppedNames.add(theme.name);
      continue;
    }
    const share =
      responseIds.length === theme.responseIds.length
        ? theme.share
        : sentimentsBefore > 0 && responseSentiments && responseSentiments.length > 0
          ? responseIds.length / responseSentiments.length
          : theme.mentions > 0
            ? (theme.share * responseIds.length) / theme.mentions
            : 0;
    themes.push({
      ...theme,
      responseIds,
      mentions: responseIds.length,
      share: Math.min(1, Math.max(0, share)),
      sampleQuotes: theme.sampleQuotes.filter((quote) => !quotesPerson(quote, texts)),
    });
  }
  const actions = (result.actions ?? []).filter(
    (action) => !(action.basis === 'theme' && action.theme !== null && droppedNames.has(action.theme)),
  );
  const scrubbed: AnalysisResult = { ...result, themes };
  if (responseSentiments) scrubbed.responseSentiments = responseSentiments;
  if (dropped > 0) {
    scrubbed.actions = actions;
    scrubbed.recommendations = actions.map((action) => action.text);
    if (result.anonymity) {
      scrubbed.anonymity = { ...result.anonymity, suppressedThemes: result.anonymity.suppressedThemes + dropped };
    }
  }
  return JSON.stringify(scrubbed) === JSON.stringify(result) ? keep : { kind: 'replace', data: scrubbed };
}

// ---------------------------------------------------------------------------------------------------------------
// Events

export interface EventLike {
  id: string;
  type: string;
  data: unknown;
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

const syncErrors = (data: unknown): { externalId?: string | null }[] => {
  const errors = record(data).errors;
  return Array.isArray(errors) ? (errors as { externalId?: string | null }[]) : [];
};

/**
 * Whether an event's payload names the person or holds their data: a `response.submitted` of one of their
 * responses or naming them, a sync result whose errors name them, an AI result that quotes or lists them.
 */
export function eventHolds(event: EventLike, person: Person): boolean {
  const data = record(event.data);
  switch (event.type) {
    case 'response.submitted':
      return (
        person.responseIds.has(String(data.id)) ||
        (typeof data.respondentExternalId === 'string' && person.externalIds.has(data.respondentExternalId))
      );
    case 'respondents.sync.completed':
    case 'respondents.sync.failed':
      return syncErrors(data).some((e) => typeof e.externalId === 'string' && person.externalIds.has(e.externalId));
    case 'analytics.ai.completed':
      return analysisHolds(data, String(data.surveyId), person);
    default:
      return false;
  }
}

/** A sync's errors without the person's id (the error itself, its index and message, stay). */
export function scrubSyncErrors<T extends { externalId?: string | null }>(
  errors: readonly T[],
  person: Person,
): Plan<T[]> {
  if (!errors.some((e) => typeof e.externalId === 'string' && person.externalIds.has(e.externalId))) return keep;
  return {
    kind: 'replace',
    data: errors.map((e) =>
      typeof e.externalId === 'string' && person.externalIds.has(e.externalId) ? { ...e, externalId: null } : e,
    ),
  };
}

/**
 * What an erasure does to one event. `response.submitted`: with the responses, the event goes (and its deliveries
 * with it), as the response did; keeping the responses, only the respondent id goes (as the response's own does).
 * Sync results lose the person's id in their errors; AI results as `scrubAnalysis`.
 */
export function eventPlan(event: EventLike, person: Person, scope: ErasureScope): Plan<unknown> {
  if (!eventHolds(event, person)) return keep;
  const data = record(event.data);
  switch (event.type) {
    case 'response.submitted':
      if (scope === 'identity_and_responses') return { kind: 'delete' };
      return typeof data.respondentExternalId === 'string' && person.externalIds.has(data.respondentExternalId)
        ? { kind: 'replace', data: { ...data, respondentExternalId: null } }
        : keep;
    case 'respondents.sync.completed':
    case 'respondents.sync.failed': {
      const errors = scrubSyncErrors(syncErrors(data), person);
      return errors.kind === 'replace' ? { kind: 'replace', data: { ...data, errors: errors.data } } : keep;
    }
    case 'analytics.ai.completed':
      return scrubAnalysis(data, String(data.surveyId), person, scope);
    default:
      return keep;
  }
}
