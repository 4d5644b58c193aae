/**
 * Offline survey generation. The prompt's audience and subject are detected together: every topic of the
 * question bank is scored by its cues found in the prompt (wink-nlp lemmas, so "managers" finds "manager", and
 * phrases) plus the words that name its audience, and the best topic is the subject. The survey takes its questions
 * from the subject first, with a place for each other topic the prompt names and one for each question type it
 * names ("NPS", "ranking", "yes/no"…), then from the subject's related topics, and only then from the audience's
 * general questions. It orders them as a designer would: NPS first, then scales, grids, choices, open text last.
 * Deterministic: the same request always gives the same draft.
 */
import type { QuestionInput, SurveyCreate as SurveyDraft } from '../../generated/openapi.js';
import { lemmasOf } from './nlp.js';
import { DEFAULT_TOPIC, ENPS_QUESTION, topics, type Audience, type Topic } from './question-bank.js';

export type { SurveyDraft };

export interface GenerateRequest {
  prompt: string;
  questionCount: number;
  title?: string;
}

/**
 * The words that name each audience other than employees (the default). Words that other phrases use too
 * ("leave", "order", "training", "application") are left out or only count in the phrase that makes them
 * unambiguous.
 */
const audienceWords: [Audience, RegExp][] = [
  [
    'leavers',
    /\b(exit|leaving|leavers?|departures?|departing|resign(s|ed|ing|ation|ations)?|offboarding|quit(s|ting)?|attrition|alumni|notice period|former (employees|staff|colleagues))\b/g,
  ],
  [
    'candidates',
    /\b(candidates?|applicants?|job applications?|application process|recruit(ing|ment|ers?)?|hiring (process|experience|funnel)|interview(s|ed|ees?|ers?|ing)?|job offers?)\b/g,
  ],
  [
    'attendees',
    /\b(events?|conferences?|summits?|meetups?|off-?sites?|hackathons?|webinars?|workshops?|seminars?|bootcamps?|attendees?|participants?|keynotes?|trade shows?|expos?|galas?|kick-?offs?|festivals?|ceremon(y|ies)|trainees?|learners?|students?|training (sessions?|courses?|days?|feedback|evaluations?|programmes?)|(feedback on|evaluation of) (the|our|this|a) training|(?<!of )courses?)\b/g,
  ],
  [
    'customers',
    /\b(customers?|clients?|buyers?|users?|shoppers?|purchases?|subscribers?|consumers?|patients?|guests?|diners?|passengers?|visitors?|testers?|csat|ces)\b/g,
  ],
];

/**
 * A customer or client word that only says which staff are meant: a "customer support team" answers as employees.
 * Replaced by the staff word before the audiences are counted.
 */
const customerStaff =
  /\b(?:customer|client)s?[- ](?:(?:support|service|success|care|facing|experience|services)[- ])?(teams?|staff|agents?|reps?|representatives?|managers?|engineers?|advis[eo]rs?|department)\b/gi;
/** Words for people who work here: evidence that the survey is for employees, weaker than another audience's words. */
const staffWords =
  /\b(employees?|staff|colleagues?|co-?workers?|workforce|personnel|workers?|teams?|agents?|reps?|representatives?|nurses?|engineers?|developers?|teachers?|directors?|new hires?|joiners?|starters?)\b/;

/** How much one word naming an audience counts against one cue of a topic: who answers usually decides. */
const AUDIENCE_WEIGHT = 1.5;
/** Staff words make a survey an employees' one, but a customer or event word beside them still wins. */
const STAFF_WEIGHT = 1;
/** Employees are the default audience: another audience needs a cue more than this to take a prompt. */
const DEFAULT_AUDIENCE_EDGE = 0.5;
const WEAK_CUE = 0.25;
/** Audiences in the order that wins a tie, the more specific first: "exit interview" is a leaver's survey. */
const audienceOrder: Audience[] = ['leavers', 'candidates', 'attendees', 'customers', 'employees'];

/** Lower-case words between single spaces, hyphens and punctuation as spaces: how phrases are looked for. */
function plain(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  return ` ${words} `;
}

const cueLemmas = new Map<string, string>();
/** A one-word cue as a lemma, so that a cue written "mentoring" finds "mentor" as well as "mentoring". */
function lemmaOfCue(cue: string): string {
  let lemma = cueLemmas.get(cue);
  if (lemma === undefined) cueLemmas.set(cue, (lemma = lemmasOf(cue)[0] ?? cue));
  return lemma;
}

/** The prompt, its staff phrases reduced to their staff word ("customer support team" to "team"). */
interface PromptWords {
  /** For phrases: see `plain`. */
  plain: string;
  /** Lemmas of the prompt's words, hyphenated words also split ("post-purchase" gives "purchase"). */
  lemmas: Set<string>;
  /** Distinct words naming each audience; employees count their staff words. */
  audiences: Map<Audience, number>;
  /** Lemmas of the prompt's words that name each audience. */
  naming: Map<Audience, Set<string>>;
}

function wordsOf(prompt: string): PromptWords {
  const lower = prompt.toLowerCase().replace(customerStaff, '$1');
  const audiences = new Map<Audience, number>();
  const naming = new Map<Audience, Set<string>>();
  for (const [audience, pattern] of audienceWords) {
    const found = lower.match(pattern) ?? [];
    audiences.set(audience, new Set(found).size);
    naming.set(audience, new Set(lemmasOf(found.join(' '))));
  }
  audiences.set('employees', staffWords.test(lower) ? 1 : 0);
  naming.set('employees', new Set());
  return {
    plain: plain(lower),
    lemmas: new Set([...lemmasOf(lower), ...lemmasOf(lower.replace(/-/g, ' '))]),
    audiences,
    naming,
  };
}

const isPhrase = (cue: string) => cue.includes(' ') || cue.includes('-');

/**
 * What the prompt says of a topic: 1 per cue found as a lemma (half when the word also names the audience:
 * "resigning … career and pay questions for leavers" is about career and pay, "resigning" and "leavers" only say
 * who answers), 2 per phrase, a quarter per weak cue (the kind of survey, not its subject).
 */
function cueScore(topic: Topic, words: PromptWords): { subject: number; weak: number } {
  const naming = words.naming.get(topic.audience)!;
  const found = (cue: string) =>
    isPhrase(cue) ? words.plain.includes(plain(cue)) : words.lemmas.has(cue) || words.lemmas.has(lemmaOfCue(cue));
  let subject = 0;
  for (const cue of topic.cues)
    if (found(cue)) subject += isPhrase(cue) ? 2 : naming.has(cue) || naming.has(lemmaOfCue(cue)) ? 0.5 : 1;
  let weak = 0;
  for (const cue of topic.weakCues ?? []) if (found(cue)) weak += WEAK_CUE;
  return { subject, weak };
}

const topicOf = (key: string) => topics.find((t) => t.key === key)!;

interface Detected {
  audience: Audience;
  /** The audience's topics the prompt names, most relevant first; the audience's general topic if none. */
  topics: Topic[];
  /** The topics named by more than a weak cue (the kind of survey): those the draft keeps a place for. */
  named: Set<Topic>;
}

function detect(prompt: string): Detected {
  const words = wordsOf(prompt);
  const scored = topics.map((topic, order) => {
    const { subject, weak } = cueScore(topic, words);
    const audienceScore =
      topic.audience === 'employees'
        ? STAFF_WEIGHT * words.audiences.get('employees')! + DEFAULT_AUDIENCE_EDGE
        : AUDIENCE_WEIGHT * words.audiences.get(topic.audience)!;
    return { topic, order, subject, cues: subject + weak, total: subject + weak + audienceScore };
  });
  const best = [...scored].sort(
    (a, b) =>
      b.total - a.total ||
      audienceOrder.indexOf(a.topic.audience) - audienceOrder.indexOf(b.topic.audience) ||
      a.order - b.order,
  )[0]!;
  const audience = best.topic.audience;
  // On a tie the specific topic goes first: the general one is what the draft falls back to anyway.
  const general = DEFAULT_TOPIC[audience];
  const found = scored
    .filter((s) => s.topic.audience === audience && s.cues > 0)
    .sort(
      (a, b) =>
        b.cues - a.cues || Number(a.topic.key === general) - Number(b.topic.key === general) || a.order - b.order,
    );
  return {
    audience,
    topics: found.length > 0 ? found.map((s) => s.topic) : [topicOf(general)],
    named: new Set(found.filter((s) => s.subject > 0).map((s) => s.topic)),
  };
}

/** Who the prompt's survey is for. */
export function detectAudience(prompt: string): Audience {
  return detect(prompt).audience;
}

/** The audience's topics named by the prompt, most relevant first (the audience's general topic if none). */
export function detectTopics(prompt: string): Topic[] {
  return detect(prompt).topics;
}

const wantsEnps = (prompt: string) => /\b(e-?nps|employee net promoter)\b/i.test(prompt);

/** A question type a prompt can ask for; `yes_no` is a choice between yes and no. */
export type NamedType = QuestionInput['type'] | 'yes_no';

/** How people name each question type in a prompt. */
const typeWords: [NamedType, RegExp][] = [
  ['nps', /\b(e-?nps|nps|net promoter)\b/i],
  ['rating', /\b(ratings?|rate|rated|scales?|likert|stars?|1\s*(-|–|to)\s*(5|7|10))\b/i],
  ['matrix', /\b(grids?|matrix|matrices|likert)\b/i],
  ['ranking', /\b(rank|ranks|ranking|ranked|prioriti[sz]e|prioriti[sz]ation)\b/i],
  ['yes_no', /\byes\s*(\/|or|-)\s*no\b/i],
  ['date', /\b(?<!up[- ]to[- ])dates?\b/i],
  ['number', /\b(numbers?|numeric|numerical|how many)\b/i],
  ['text', /\b(open[- ]?(text|ended|questions?|comments?|answers?)|free[- ]?text|comments?|write-?ins?|verbatims?)\b/i],
  ['multiple_choice', /\b(multiple[- ]choice|checkbox(es)?|tick all|select all)\b/i],
  ['single_choice', /\b(single[- ]choice|dropdowns?|radio buttons?)\b/i],
];

/** The question types the prompt asks for, in the order above. */
export function namedTypes(prompt: string): NamedType[] {
  return typeWords.filter(([, pattern]) => pattern.test(prompt)).map(([type]) => type);
}

const isYesNo = (q: QuestionInput) =>
  q.type === 'single_choice' && q.choices.length === 2 && q.choices[0]!.label === 'Yes' && q.choices[1]!.label === 'No';
const isOfType = (q: QuestionInput, type: NamedType) => (type === 'yes_no' ? isYesNo(q) : q.type === type);

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

const unique = <T>(items: readonly T[]) => [...new Set(items)];
/** The questions in the order of their types, each type's in the order given. */
const byRank = (questions: readonly QuestionInput[]) =>
  questions
    .map((q, i) => ({ q, i }))
    .sort((a, b) => rank(a.q) - rank(b.q) || a.i - b.i)
    .map(({ q }) => q);

export function generateOffline(request: GenerateRequest): SurveyDraft {
  const { audience, topics: detected, named } = detect(request.prompt);
  const types = namedTypes(request.prompt);
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
  // Every survey of three questions or more ends with open questions (one in five), a shorter one only when the
  // prompt asks for open text; keep their places.
  const openSlots = count >= 3 ? Math.max(1, Math.floor(count / 5)) : types.includes('text') ? 1 : 0;
  const closedSlots = count - openSlots;
  // The subject (the most relevant topic) fills the draft first. Each other specific topic the prompt names gets one
  // place, up to a quarter of the draft (a topic already in it, as the eNPS question asked for, needs none); then
  // the subject's related topics, nearest first, and the audience's general topic fill what the subject cannot.
  const [subject, ...others] = detected as [Topic, ...Topic[]];
  const general = topicOf(DEFAULT_TOPIC[audience]);
  const mentioned = others.filter((t) => t !== general && named.has(t) && !t.questions.some((q) => seen.has(q.text)));
  const related = (subject.related ?? []).map(topicOf);
  const rest = unique([...mentioned, ...related, general]).filter((t) => t !== subject);
  const audienceTopics = topics.filter((t) => t.audience === audience);
  // A question of each type the prompt names, the subject's own first: an "NPS survey" has its NPS question even
  // when its subject's questions hold none. Open text has its places already, and a grid is made from the draft's
  // statements below.
  for (const type of types) {
    if (type === 'text' || type === 'matrix' || chosen.some((q) => isOfType(q, type))) continue;
    if (chosen.length >= closedSlots) break;
    const question = [subject, ...rest, ...audienceTopics]
      .flatMap((t) => t.questions)
      .find((q) => isOfType(q, type) && !seen.has(q.text));
    if (question) add(question);
  }
  const share = Math.min(mentioned.length, Math.floor(count / 4));
  const subjectClosed = closedOf(subject).filter((q) => !seen.has(q.text));
  const beforeShare = Math.max(0, closedSlots - chosen.length - share);
  const closed = [
    ...subjectClosed.slice(0, beforeShare),
    ...mentioned.slice(0, share).flatMap((t) => closedOf(t).find((q) => !subjectClosed.includes(q)) ?? []),
    ...subjectClosed.slice(beforeShare),
    ...roundRobin(mentioned.map(closedOf)),
    ...rest.filter((t) => !mentioned.includes(t)).flatMap(closedOf),
  ];
  for (const q of closed) if (chosen.length < closedSlots) add(q);
  for (const t of [subject, ...rest]) for (const q of t.questions) if (q.type === 'text') add(q);
  // A short bank for this prompt: fill up from the audience's other topics, never from another audience's.
  for (const topic of audienceTopics) for (const q of closedOf(topic)) add(q);
  for (const topic of audienceTopics) for (const q of topic.questions) add(q);
  const ordered = byRank(chosen).map((q) => structuredClone(q));
  const sources = unique([subject, ...rest, ...audienceTopics]);
  const grid = types.includes('matrix') ? withGrid(asGrid(ordered, sources), sources, types) : ordered;
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

/**
 * A draft asked for a grid that has none (no agreement statements to fold into one): the first bank grid of its
 * topics takes the place of its last closed question that no named type needs.
 */
function withGrid(questions: QuestionInput[], sources: readonly Topic[], types: readonly NamedType[]): QuestionInput[] {
  if (questions.some((q) => q.type === 'matrix')) return questions;
  const texts = new Set(questions.map((q) => q.text));
  const grid = sources.flatMap((t) => t.questions).find((q) => q.type === 'matrix' && !texts.has(q.text));
  const replaced = questions.findLastIndex(
    (q) => q.type !== 'text' && q.type !== 'nps' && !types.some((type) => isOfType(q, type)),
  );
  if (!grid || replaced < 0) return questions;
  const result = questions.filter((_, i) => i !== replaced);
  result.push(structuredClone(grid));
  return byRank(result);
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

const isAgreement = (q: QuestionInput) =>
  q.type === 'rating' && q.minLabel === 'Strongly disagree' && q.maxLabel === 'Strongly agree';

/** The most statements one grid holds: a longer grid tires respondents, and the rest stay single statements. */
const MAX_GRID_ROWS = 10;

/**
 * A prompt that asks for a grid gets its agreement statements as one Likert matrix (up to `MAX_GRID_ROWS` of them),
 * filled up from the same topics' other statements so that the draft keeps its number of questions, then from their
 * other questions, the subject's first.
 */
function asGrid(questions: QuestionInput[], sources: readonly Topic[]): QuestionInput[] {
  const statements = questions.filter(isAgreement).slice(0, MAX_GRID_ROWS);
  if (statements.length === 0) return questions;
  const texts = new Set(questions.map((q) => q.text));
  const more = sources
    .flatMap((t) => t.questions)
    .filter((q) => isAgreement(q) && !texts.has(q.text) && texts.add(q.text));
  // The matrix replaces the statements: bring the count back with more statements as rows, or other questions.
  const rows = [...statements, ...more].slice(0, Math.min(MAX_GRID_ROWS, Math.max(3, statements.length + 2)));
  if (rows.length < 2) return questions;
  const matrix: QuestionInput = {
    type: 'matrix',
    text: 'How much do you agree with each statement?',
    required: true,
    rows: rows.map((q) => ({ text: q.text })),
    scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
    allowNotApplicable: true,
  };
  const rowTexts = new Set(rows.map((q) => q.text));
  const first = questions.indexOf(statements[0]!);
  const others = questions.filter((q) => !statements.includes(q) && !rowTexts.has(q.text));
  const fill = sources
    .flatMap((t) => t.questions)
    .filter((q) => !isAgreement(q) && q.type !== 'nps' && !texts.has(q.text) && texts.add(q.text));
  const result = [...others.slice(0, first), matrix, ...others.slice(first)];
  while (result.length < questions.length && fill.length > 0) result.push(structuredClone(fill.shift()!));
  return byRank(result);
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

const numberWords: Record<string, number> = {
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  'twenty-five': 25,
  thirty: 30,
};

const statedCount = new RegExp(
  `\\b(\\d{1,2}|${Object.keys(numberWords).join('|')})\\s*(?:-\\s*)?(?:questions?|items?|qs)\\b`,
  'i',
);

/** A count stated in the prompt ("10 questions", "a twenty-question survey"), if any. */
export function countInPrompt(prompt: string): number | undefined {
  const match = statedCount.exec(prompt);
  if (!match) return undefined;
  const n = numberWords[match[1]!.toLowerCase()] ?? Number(match[1]);
  return n >= 1 && n <= 30 ? n : undefined;
}
