/**
 * Offline survey generation: the prompt's topics are detected with wink-nlp (lemmas, so "managers" finds
 * "manager") against the question bank's cues; the survey takes questions from the detected topics in turn,
 * most relevant topic first, and orders them as a designer would: NPS first, then scales, then choices, open
 * text last. Deterministic: the same request always gives the same draft.
 */
import type { components } from '../../generated/openapi.js';
import { lemmasOf } from './nlp.js';
import { DEFAULT_TOPIC, ENPS_QUESTION, topics, type Topic } from './question-bank.js';

type QuestionInput = components['schemas']['QuestionInput'];
export type SurveyDraft = components['schemas']['SurveyCreate'];

export interface GenerateRequest {
  prompt: string;
  questionCount: number;
  title?: string;
}

/** Topics of the prompt, most relevant first (score, then the bank's order). */
export function detectTopics(prompt: string): Topic[] {
  const lower = prompt.toLowerCase();
  const lemmas = new Set(lemmasOf(prompt));
  const scored = topics.map((topic, order) => {
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
  // "customer" cues are generic words; without a customer word they do not make a customer survey.
  const customer = /\b(customer|client|buyer|user)s?\b/.test(lower);
  const filtered = found.filter((t) => t.key !== 'customer_nps' || customer);
  return filtered.length > 0 ? filtered : [topics.find((t) => t.key === DEFAULT_TOPIC)!];
}

const wantsEnps = (prompt: string) => /\b(e-?nps|employee net promoter)\b/i.test(prompt);

const rank = (q: QuestionInput) => ({ nps: 0, rating: 1, single_choice: 2, multiple_choice: 3, text: 4 })[q.type];

export function generateOffline(request: GenerateRequest): SurveyDraft {
  const detected = detectTopics(request.prompt);
  const count = Math.max(1, Math.min(30, request.questionCount));
  const chosen: QuestionInput[] = [];
  const seen = new Set<string>();
  const add = (q: QuestionInput) => {
    if (chosen.length >= count || seen.has(q.text)) return;
    seen.add(q.text);
    chosen.push(q);
  };
  if (wantsEnps(request.prompt)) add(ENPS_QUESTION);
  // Every survey of three questions or more ends with one open question; keep a place for it.
  const pool =
    detected.length > 1 || detected[0]!.key === DEFAULT_TOPIC
      ? detected
      : [...detected, topics.find((t) => t.key === DEFAULT_TOPIC)!];
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
  // A short bank for this prompt: fill up from the general topics.
  for (const topic of topics) for (const q of topic.questions) add(q);
  const questions = chosen
    .map((q, i) => ({ q, i }))
    .sort((a, b) => rank(a.q) - rank(b.q) || a.i - b.i)
    .map(({ q }) => structuredClone(q));
  const primary = detected[0]!;
  return {
    title: request.title ?? primary.title,
    description: primary.description,
    questions,
    settings: { anonymous: primary.key !== 'customer_nps', allowMultipleResponses: false },
  };
}

/** A count stated in the prompt ("10 questions"), if any. */
export function countInPrompt(prompt: string): number | undefined {
  const match = /\b(\d{1,2})\s*(?:-\s*)?(?:questions?|items?|qs)\b/i.exec(prompt);
  if (!match) return undefined;
  const n = Number(match[1]);
  return n >= 1 && n <= 30 ? n : undefined;
}
