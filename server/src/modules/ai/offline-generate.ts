/**
 * Offline survey generation: the prompt's topics are detected with wink-nlp (lemmas, so "managers" finds
 * "manager") against the question bank's cues; the survey takes questions from the detected topics in turn,
 * most relevant topic first, and orders them as a designer would: NPS first, then scales, then choices, open
 * text last. Deterministic: the same request always gives the same draft.
 */
import type { components } from '../../generated/openapi.js';
import { lemmasOf } from './nlp.js';
import { DEFAULT_TOPIC, ENPS_QUESTION, topics, type Audience, type Topic } from './question-bank.js';

type QuestionInput = components['schemas']['QuestionInput'];
export type SurveyDraft = components['schemas']['SurveyCreate'];

export interface GenerateRequest {
  prompt: string;
  questionCount: number;
  title?: string;
}

/**
 * The words that name each audience other than employees (the default). The audience with the most distinct words
 * in the prompt wins; a tie goes to the earlier one here, so "exit interview" is a leaver's survey, not a
 * candidate's. Words that other phrases use too ("leave", "order", "training", "application") are left out or
 * only count in the phrase that makes them unambiguous.
 */
const audienceWords: [Audience, RegExp][] = [
  [
    'leavers',
    /\b(exit|leaving|leavers?|departures?|departing|resign(s|ed|ing|ation|ations)?|offboarding|quit(s|ting)?|attrition|alumni|notice period)\b/g,
  ],
  [
    'candidates',
    /\b(candidates?|applicants?|job applications?|application process|recruit(ing|ment|ers?)?|hiring (process|experience|funnel)|interview(s|ed|ees?|ers?|ing)?|job offers?)\b/g,
  ],
  [
    'attendees',
    /\b(events?|conferences?|summits?|meetups?|off-?sites?|hackathons?|webinars?|workshops?|seminars?|bootcamps?|attendees?|participants?|keynotes?|trade shows?|expos?|training (sessions?|courses?|days?)|(?<!of )courses?)\b/g,
  ],
  [
    'customers',
    /\b(customers?|clients?|buyers?|users?|shoppers?|purchases?|subscribers?|consumers?|patients?|guests?|csat|ces)\b/g,
  ],
];

/** Who the prompt's survey is for: the audience named by the most distinct words, else employees. */
export function detectAudience(prompt: string): Audience {
  const lower = prompt.toLowerCase();
  let best: { audience: Audience; score: number } = { audience: 'employees', score: 0 };
  for (const [audience, words] of audienceWords) {
    const score = new Set(lower.match(words) ?? []).size;
    if (score > best.score) best = { audience, score };
  }
  return best.audience;
}

const topicOf = (key: string) => topics.find((t) => t.key === key)!;

/** The audience's topics named by the prompt, most relevant first (score, then the bank's order). */
export function detectTopics(prompt: string, audience: Audience = detectAudience(prompt)): Topic[] {
  const lower = prompt.toLowerCase();
  const lemmas = new Set(lemmasOf(prompt));
  const scored = topics
    .map((topic, order) => ({ topic, order }))
    .filter(({ topic }) => topic.audience === audience)
    .map(({ topic, order }) => {
      let score = 0;
      for (const cue of topic.cues) {
        if (cue.includes(' ') || cue.includes('-')) score += lower.includes(cue) ? 2 : 0;
        else if (lemmas.has(cue)) score += 1;
      }
      return { topic, score, order };
    });
  const found = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map((s) => s.topic);
  return found.length > 0 ? found : [topicOf(DEFAULT_TOPIC[audience])];
}

const wantsEnps = (prompt: string) => /\b(e-?nps|employee net promoter)\b/i.test(prompt);

/** Where a question type goes in a draft: scores first, open text last. */
const rank = (q: QuestionInput) =>
  ({
    nps: 0,
    rating: 1,
    matrix: 2,
    single_choice: 3,
    multiple_choice: 4,
    ranking: 5,
    number: 6,
    date: 7,
    text: 8,
  })[q.type];

export function generateOffline(request: GenerateRequest): SurveyDraft {
  const audience = detectAudience(request.prompt);
  const detected = detectTopics(request.prompt, audience);
  const count = Math.max(1, Math.min(30, request.questionCount));
  const chosen: QuestionInput[] = [];
  const seen = new Set<string>();
  const add = (q: QuestionInput) => {
    if (chosen.length >= count || seen.has(q.text)) return;
    seen.add(q.text);
    chosen.push(q);
  };
  // An employer NPS only where the answers are about working here.
  if (wantsEnps(request.prompt) && (audience === 'employees' || audience === 'leavers')) add(ENPS_QUESTION);
  // Every survey of three questions or more ends with one open question; keep a place for it.
  const general = topicOf(DEFAULT_TOPIC[audience]);
  const pool = detected.includes(general) ? detected : [...detected, general];
  const closed = pool.map((t) => t.questions.filter((q) => q.type !== 'text'));
  const opened = pool.flatMap((t) => t.questions.filter((q) => q.type === 'text'));
  const openSlots = count >= 3 ? Math.max(1, Math.floor(count / 5)) : 0;
  // Closed questions round-robin over the topics (the most relevant topic first in each round).
  for (let round = 0; chosen.length < count - openSlots && closed.some((list) => list.length > round); round++) {
    for (const list of closed) {
      if (chosen.length >= count - openSlots) break;
      const q = list[round];
      if (q) add(q);
    }
  }
  for (const q of opened) add(q);
  // A short bank for this prompt: fill up from the audience's other topics, never from another audience's.
  for (const topic of topics) if (topic.audience === audience) for (const q of topic.questions) add(q);
  const ordered = chosen
    .map((q, i) => ({ q, i }))
    .sort((a, b) => rank(a.q) - rank(b.q) || a.i - b.i)
    .map(({ q }) => structuredClone(q));
  const grid = wantsGrid(request.prompt)
    ? asGrid(ordered, [...pool, ...topics.filter((t) => t.audience === audience)])
    : ordered;
  // Keys are unique within a survey: a second question whose first words are the same gets a number.
  const keys = new Set<string>();
  const questions = withFollowUpLogic(
    grid.map((q) => {
      const base = keyOf(audience, q);
      let key = base;
      for (let n = 2; keys.has(key); n++) key = `${base.slice(0, 96)}-${n}`;
      keys.add(key);
      return { ...q, key };
    }),
  );
  const primary = detected[0]!;
  return {
    title: request.title ?? primary.title,
    description: primary.description,
    questions,
    // Customers answer as themselves (a follow-up needs to know who); every other audience answers anonymously.
    settings: { anonymous: audience !== 'customers', allowMultipleResponses: false },
  };
}

/**
 * A question's key in drafts: its audience and the first words of its text, so that the same bank question gets
 * the same key in every draft, and cycles of a generated survey compare (`GET /analytics/trends`).
 */
function keyOf(audience: string, question: QuestionInput): string {
  const words = (question.type === 'matrix' ? question.rows.map((row) => row.text).join(' ') : question.text)
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9 ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 6);
  return `${audience}.${question.type === 'matrix' ? 'grid.' : ''}${words.join('-')}`
    .slice(0, 100)
    .replace(/[-.]+$/, '');
}

const wantsGrid = (prompt: string) => /\b(grid|matrix|likert)\b/i.test(prompt);

const isAgreement = (q: QuestionInput) =>
  q.type === 'rating' && q.minLabel === 'Strongly disagree' && q.maxLabel === 'Strongly agree';

/**
 * A prompt that asks for a grid gets its agreement statements as one Likert matrix (at the first statement's
 * place), filled up from the same topics' other statements so that the draft keeps its number of questions.
 */
function asGrid(questions: QuestionInput[], sources: readonly Topic[]): QuestionInput[] {
  const statements = questions.filter(isAgreement);
  if (statements.length === 0) return questions;
  const texts = new Set(questions.map((q) => q.text));
  const more = sources
    .flatMap((t) => t.questions)
    .filter((q) => isAgreement(q) && !texts.has(q.text) && texts.add(q.text));
  // The matrix replaces the statements: bring the count back with more statements as rows, or other questions.
  const rows = [...statements, ...more].slice(0, Math.min(30, Math.max(3, statements.length + 2)));
  if (rows.length < 2) return questions;
  const matrix: QuestionInput = {
    type: 'matrix',
    text: 'How much do you agree with each statement?',
    required: true,
    rows: rows.map((q) => ({ text: q.text })),
    scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
    allowNotApplicable: true,
  };
  const first = questions.indexOf(statements[0]!);
  const others = questions.filter((q) => !isAgreement(q));
  const fill = sources
    .flatMap((t) => t.questions)
    .filter((q) => !isAgreement(q) && q.type !== 'nps' && !texts.has(q.text) && texts.add(q.text))
    .sort((a, b) => rank(a) - rank(b));
  const result = [...others.slice(0, first), matrix, ...others.slice(first)];
  while (result.length < questions.length && fill.length > 0) result.splice(result.length - 1, 0, fill.shift()!);
  return result;
}

/**
 * Logic a designer would add: an open question about what to improve follows an NPS question, and is shown to
 * those who would not promote (0–8). Ids are then given, as rules name questions by id.
 */
function withFollowUpLogic(questions: QuestionInput[]): QuestionInput[] {
  const score = questions.findIndex((q) => q.type === 'nps');
  const followUp = questions.findIndex(
    (q, i) => i > score && q.type === 'text' && /\b(improve|better|change|differently)\b/i.test(q.text),
  );
  if (score < 0 || followUp < 0) return questions;
  return questions.map((q, i) => ({
    ...q,
    id: `q_${i + 1}`,
    ...(i === followUp ? { displayIf: { all: [{ questionId: `q_${score + 1}`, op: 'lte' as const, value: 8 }] } } : {}),
  }));
}

/** A count stated in the prompt ("10 questions"), if any. */
export function countInPrompt(prompt: string): number | undefined {
  const match = /\b(\d{1,2})\s*(?:-\s*)?(?:questions?|items?|qs)\b/i.exec(prompt);
  if (!match) return undefined;
  const n = Number(match[1]);
  return n >= 1 && n <= 30 ? n : undefined;
}
