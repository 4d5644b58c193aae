/**
 * Offline survey generation: the prompt's topics are detected with wink-nlp (lemmas, so "managers" finds
 * "manager") against the question bank's cues; the survey takes its questions from the most relevant topic (the
 * prompt's subject) first, with a place for each other topic the prompt names, and only then from the audience's
 * general questions. It orders them as a designer would: NPS first, then scales, grids, choices, open text last.
 * Deterministic: the same request always gives the same draft.
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

/**
 * The audience's topics named by the prompt, most relevant first (score, then the bank's order). A cue scores 1
 * when a lemma of the prompt is the cue (2 for a phrase found as such), and half that when the word also names the
 * audience: "resigning … career and pay questions for leavers" is about career and pay, the words "resigning" and
 * "leavers" only say who answers.
 */
export function detectTopics(prompt: string, audience: Audience = detectAudience(prompt)): Topic[] {
  const lower = prompt.toLowerCase();
  const lemmas = new Set(lemmasOf(prompt));
  const audiencePattern = audienceWords.find(([a]) => a === audience)?.[1];
  const naming = new Set(audiencePattern ? lemmasOf((lower.match(audiencePattern) ?? []).join(' ')) : []);
  const scored = topics
    .map((topic, order) => ({ topic, order }))
    .filter(({ topic }) => topic.audience === audience)
    .map(({ topic, order }) => {
      let score = 0;
      for (const cue of topic.cues) {
        if (cue.includes(' ') || cue.includes('-')) score += lower.includes(cue) ? 2 : 0;
        else if (lemmas.has(cue)) score += naming.has(cue) ? 0.5 : 1;
      }
      return { topic, score, order };
    });
  // On a tie the specific topic goes first: the general one is what the draft falls back to anyway.
  const general = DEFAULT_TOPIC[audience];
  const found = scored
    .filter((s) => s.score > 0)
    .sort(
      (a, b) =>
        b.score - a.score || Number(a.topic.key === general) - Number(b.topic.key === general) || a.order - b.order,
    )
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
  // Every survey of three questions or more ends with open questions (one in five); keep their places.
  const openSlots = count >= 3 ? Math.max(1, Math.floor(count / 5)) : 0;
  const closedSlots = count - openSlots;
  // The subject (the most relevant topic) fills the draft first. Each other specific topic the prompt names gets one
  // place, up to a quarter of the draft (a topic already in it, as the eNPS question asked for, needs none); the
  // audience's general topic, then its other topics, only fill what the subject cannot.
  const [subject, ...others] = detected as [Topic, ...Topic[]];
  const general = topicOf(DEFAULT_TOPIC[audience]);
  const mentioned = others.filter((t) => t !== general && !t.questions.some((q) => seen.has(q.text)));
  const rest = subject === general ? mentioned : [...mentioned, general];
  const share = Math.min(mentioned.length, Math.floor(count / 4));
  const subjectClosed = closedOf(subject).filter((q) => !seen.has(q.text));
  const beforeShare = Math.max(0, closedSlots - chosen.length - share);
  const closed = [
    ...subjectClosed.slice(0, beforeShare),
    ...mentioned.slice(0, share).flatMap((t) => closedOf(t).find((q) => !subjectClosed.includes(q)) ?? []),
    ...subjectClosed.slice(beforeShare),
    ...roundRobin(rest.map(closedOf)),
  ];
  for (const q of closed) if (chosen.length < closedSlots) add(q);
  for (const t of [subject, ...rest]) for (const q of t.questions) if (q.type === 'text') add(q);
  // A short bank for this prompt: fill up from the audience's other topics, never from another audience's.
  for (const topic of topics) if (topic.audience === audience) for (const q of closedOf(topic)) add(q);
  for (const topic of topics) if (topic.audience === audience) for (const q of topic.questions) add(q);
  const ordered = chosen
    .map((q, i) => ({ q, i }))
    .sort((a, b) => rank(a.q) - rank(b.q) || a.i - b.i)
    .map(({ q }) => structuredClone(q));
  const grid = wantsGrid(request.prompt)
    ? asGrid(ordered, [subject, ...rest, ...topics.filter((t) => t.audience === audience)])
    : ordered;
  // Keys are unique within a survey: a question made for this draft (a grid) whose first words are a bank
  // question's gets a number too.
  const keys = new Set<string>();
  const questions = withFollowUpLogic(
    grid.map((q) => {
      const base = keyOf(audience, q);
      let key = base;
      for (let n = 2; keys.has(key); n++) key = numbered(base, n);
      keys.add(key);
      return { ...q, key };
    }),
  );
  return {
    title: request.title ?? subject.title,
    description: subject.description,
    questions,
    // Customers answer as themselves (a follow-up needs to know who); every other audience answers anonymously.
    settings: { anonymous: audience !== 'customers', allowMultipleResponses: false },
  };
}

/** What a question is, for variety: agreement statements and other scales count apart. */
const kindOf = (q: QuestionInput) => (isAgreement(q) ? 'agree' : q.type);

/**
 * A topic's closed questions in the order a short draft should take them: in passes over the bank's order, each
 * pass taking up to two agreement statements and one question of every other kind (scale, choice, grid, ranking,
 * number, date), so that eight questions on one subject are not eight statements.
 */
function closedOf(topic: Topic): QuestionInput[] {
  const kinds = new Map<string, QuestionInput[]>();
  for (const q of topic.questions) if (q.type !== 'text') kinds.set(kindOf(q), [...(kinds.get(kindOf(q)) ?? []), q]);
  const lists = [...kinds.entries()].flatMap(([kind, list]) =>
    kind === 'agree' ? [list.filter((_, i) => i % 2 === 0), list.filter((_, i) => i % 2 === 1)] : [list],
  );
  return roundRobin(lists);
}

/** The first item of every list, then the second of every list, and so on. */
function roundRobin<T>(lists: readonly T[][]): T[] {
  const out: T[] = [];
  for (let round = 0; lists.some((list) => list.length > round); round++)
    for (const list of lists) if (list[round] !== undefined) out.push(list[round]!);
  return out;
}

/**
 * A question's key in drafts: its audience and the first words of its text, so that the same bank question gets
 * the same key in every draft, and cycles of a generated survey compare (`GET /analytics/trends`). Where two bank
 * questions of an audience start with the same words, the later one in the bank's order is numbered ("-2"), always:
 * numbered only when a draft held both, it would take the other's key in a draft without it, and trends would
 * compare the two.
 */
export function keyOf(audience: string, question: QuestionInput): string {
  const base = wordsKeyOf(audience, question);
  const n = bankNumbers().get(identityOf(audience, question)) ?? 1;
  return n === 1 ? base : numbered(base, n);
}

/** The `n`th key of `base` (from 2), within the 100 characters of a key. */
const numbered = (base: string, n: number) => `${base.slice(0, 96)}-${n}`;

function wordsKeyOf(audience: string, question: QuestionInput): string {
  const words = textOf(question)
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

const textOf = (question: QuestionInput) =>
  question.type === 'matrix' ? question.rows.map((row) => row.text).join(' ') : question.text;
const identityOf = (audience: string, question: QuestionInput) =>
  `${audience}\u0000${question.type}\u0000${textOf(question)}`;

/** Each bank question's number among the audience's bank questions with the same words key, in bank order. */
let numbers: Map<string, number> | undefined;
function bankNumbers(): Map<string, number> {
  if (numbers) return numbers;
  const found = new Map<string, number>();
  const seenPerKey = new Map<string, Set<string>>();
  for (const topic of topics)
    for (const question of topic.questions) {
      const identity = identityOf(topic.audience, question);
      if (found.has(identity)) continue;
      const key = wordsKeyOf(topic.audience, question);
      const same = seenPerKey.get(key) ?? new Set<string>();
      same.add(identity);
      seenPerKey.set(key, same);
      found.set(identity, same.size);
    }
  numbers = found;
  return found;
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
