/**
 * The offline language layer: wink-nlp with its English model (`wink-eng-lite-web-model`), loaded once per
 * process. wink-nlp gives tokens, lemmas, parts of speech, negation scopes and a VADER-style sentence sentiment;
 * on top of it we add what employee comments need and general lexicons miss: workplace vocabulary
 * ("understaffed", "micromanaged", "burnout"), phrases that carry the judgement ("too many meetings", "not
 * enough time", "could be better") and the common sarcastic openers ("great, another reorg"). Everything here is
 * pure and deterministic.
 */
import winkNLP, { type Document, type ItemToken, type WinkMethods } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const modelVersion = (require('wink-eng-lite-web-model/package.json') as { version: string }).version;
/** The `model` an offline analysis reports. */
export const OFFLINE_ANALYSIS_MODEL = `wink-eng-lite-web-model@${modelVersion}`;

let instance: WinkMethods | undefined;
function nlp(): WinkMethods {
  if (!instance) {
    instance = winkNLP(model);
    // Noun phrases for keywords: longest patterns first.
    instance.learnCustomEntities([
      { name: 'np', patterns: ['[ADJ|NOUN|PROPN] [NOUN] [NOUN]', '[ADJ|NOUN|PROPN] [NOUN]'] },
    ]);
  }
  return instance;
}

/**
 * Workplace words by lemma, on wink's scale (about −4…4). Negation (wink's scope: "not", "never", "no"…)
 * flips them.
 */
const workplaceLexicon: Record<string, number> = {
  understaffed: -2.5,
  overworked: -2.5,
  overwork: -2,
  burnout: -3,
  burn: -1.5,
  exhausted: -2.5,
  exhaust: -2,
  exhausting: -2.5,
  micromanage: -2.5,
  micromanaged: -2.5,
  micromanagement: -2.5,
  micromanaging: -2.5,
  toxic: -3,
  chaotic: -2,
  chaos: -2,
  mess: -2,
  messy: -1.5,
  unclear: -1.5,
  vague: -1,
  confusing: -1.5,
  confuse: -1.5,
  disorganized: -2,
  disorganised: -2,
  outdated: -1.5,
  slow: -1.5,
  broken: -2,
  buggy: -2,
  crash: -1.5,
  unfair: -2.5,
  underpaid: -2.5,
  overpaid: 0.5,
  layoff: -2,
  layoffs: -2,
  turnover: -1.5,
  overtime: -1.5,
  stress: -2,
  stressed: -2,
  stressful: -2,
  anxious: -2,
  anxiety: -2,
  bureaucracy: -2,
  bureaucratic: -2,
  red: 0,
  siloed: -1.5,
  silo: -1.5,
  favoritism: -2.5,
  favouritism: -2.5,
  ignore: -2,
  ignored: -2,
  undervalued: -2.5,
  unappreciated: -2.5,
  demotivated: -2.5,
  demotivating: -2.5,
  disengaged: -2,
  tedious: -1.5,
  repetitive: -1,
  pointless: -2,
  useless: -2.5,
  lacking: -1.5,
  lack: -1.5,
  nonexistent: -2,
  unrealistic: -2,
  impossible: -1.5,
  drowning: -2.5,
  drown: -2,
  struggle: -1.5,
  struggling: -1.5,
  frustrating: -2.5,
  frustrated: -2.5,
  frustrate: -2,
  annoying: -2,
  unreliable: -2,
  inconsistent: -1.5,
  lag: -1,
  laggy: -1.5,
  cramped: -1.5,
  noisy: -1.5,
  cold: -0.5,
  stagnant: -2,
  stuck: -1.5,
  dead: -1.5,
  supportive: 2.5,
  support: 1,
  helpful: 2,
  flexible: 2,
  flexibility: 2,
  autonomy: 2,
  empowered: 2.5,
  empower: 2,
  valued: 2.5,
  appreciated: 2.5,
  appreciate: 2,
  recognition: 1.5,
  recognised: 2,
  recognized: 2,
  transparent: 2,
  transparency: 1.5,
  collaborative: 2,
  welcoming: 2.5,
  inclusive: 2,
  respectful: 2,
  respected: 2,
  motivated: 2,
  motivating: 2,
  inspiring: 2.5,
  rewarding: 2.5,
  fair: 1.5,
  generous: 2,
  smooth: 1.5,
  seamless: 2,
  efficient: 1.5,
  approachable: 2,
  mentor: 1,
  mentoring: 1.5,
  mentorship: 1.5,
  thriving: 2.5,
  balanced: 1.5,
  enjoy: 2,
  enjoyable: 2,
  proud: 2.5,
  grateful: 2.5,
  thankful: 2,
  kudos: 2,
  solid: 1,
  decent: 1,
  fine: 0.8,
  ok: 0.3,
  okay: 0.3,
  competitive: 1.2,
  reasonable: 1,
  nightmare: -3,
  unnoticed: -2,
  arbitrary: -2,
  rumour: -1.5,
  rumours: -1.5,
  rumor: -1.5,
  rumors: -1.5,
  frowned: -2,
  freezing: -1.5,
  ease: 1.5,
  eased: 1.5,
  lean: 1.5,
  quickly: 1,
  quick: 1,
  value: 1.5,
  manageable: 2,
  easier: 2,
  fixed: 1.2,
};

/** Phrases whose judgement lies in the combination, checked on the lower-cased text. Weights as above. */
const phrasePatterns: Array<[RegExp, number]> = [
  [/\btoo (many|much)\b/, -2],
  [/\b(not|never|hardly|barely) enough\b/, -2],
  [
    /\bno (work[- ]life balance|balance|clear|direction|feedback|support|recognition|growth|career|communication|one listens|time)\b/,
    -2.5,
  ],
  [/\black of\b/, -2],
  [/\bcould (be|use) (a lot |much |some )?(better|improvement|improving|more)\b/, -1.5],
  [/\b(needs?|need to) (to )?(improve|improvement|work|fixing|be fixed)\b/, -1.5],
  [/\bwaste of (time|money)\b/, -2.5],
  [/\bout of touch\b/, -2],
  [/\b(left|kept) in the dark\b/, -2],
  [/\bburn(ed|t)? out\b/, -2.5],
  [/\bon fire\b/, -1],
  [/\bfalls? (through|apart|short)\b/, -2],
  [/\bhard to\b/, -1.5],
  [/\bdifficult to\b/, -1.5],
  [/\bgo(es)? nowhere\b/, -2],
  [/\bdead[- ]end\b/, -2.5],
  [/\bno (complaints?|issues?|problems?)\b/, 2],
  [/\bnothing to complain\b/, 2],
  [/\bcan'?t complain\b/, 1.5],
  [/\bkeep (it )?up\b/, 1.5],
  [/\b(work[- ]life balance) (is )?(good|great|excellent|amazing)\b/, 2],
  [/\bfeel (heard|valued|supported|included|respected|appreciated)\b/, 2],
  [/\b(don'?t|do not|never) feel (heard|valued|supported|included|respected|appreciated|safe)\b/, -4.5],
  [/\bhas my back\b/, 2.5],
  [/\bgo(es)? above and beyond\b/, 2.5],
  [/\b(would|could) be nice\b/, -0.5],
  // Requests for change are complaints in a survey ("fewer meetings please", "bring back remote work").
  [/^(fewer|less|more|bring back|stop|please)\b/, -2],
  [/\bneeds? (work|improvement|improving|fixing)\b/, -2],
  [/\b(takes?|took|taking) (weeks|months|ages|forever)\b/, -2],
  [/\b(weeks|months) after\b/, -1.5],
  [/\bbelow (the )?(market|average|industry)\b/, -2.5],
  [/\bnothing (changed|changes|to do|happens|happened)\b/, -2],
  [/\bmakes? no sense\b/, -2.5],
  [/\bleft for\b/, -1.5],
  [/\brarely (work|stay) late\b/, 2],
  [/\bowned up\b/, 1.5],
  [/\bno (practical|real|proper)\b/, -2],
];

/** Sarcastic openers and markers: praise words used to complain. They turn an apparently positive text negative. */
const sarcasmPatterns: RegExp[] = [
  /^(oh )?(great|wonderful|fantastic|perfect|brilliant|awesome|lovely|love it|nice|sure|yeah|right),? (another|more|yet another|just what|because|as if|exactly)\b/,
  /\b(yeah|oh) (right|sure)\b/,
  /\bthanks for nothing\b/,
  /\b(love|loving|enjoy|enjoying) (how|that|when|the way) .*\b(never|no one|nobody|not|always|again|another|but)\b/,
  /\b(love|loving|enjoy|enjoying) \w+ing\b.*\b(never|nothing|no one|nobody|all day|hours|alone)\b/,
  /\bjust what (we|i) needed\b/,
  /\bbecause that worked so well\b/,
  /\bwhat could (possibly )?go wrong\b/,
  /\bso much for\b/,
  /\bwho needs\b/,
  /\bclearly (a|the) (top )?priority\b/,
  /\b(as always|as usual),? (nothing|no one|nobody)\b/,
];

export interface TextFeatures {
  /** −1…1. */
  sentiment: number;
  /** Lemmas of content words (nouns, verbs, adjectives, proper nouns), lower case, no stop words. */
  terms: string[];
  /** Noun phrases, lower case. */
  phrases: string[];
  /** Every word's lemma, normal form and singular, for matching cue words whatever the tagger made of them. */
  forms: Set<string>;
  /** Words, and of them English stop words: their share tells English text from other languages. */
  words: number;
  stopWords: number;
}

const contentPos = new Set(['NOUN', 'PROPN', 'ADJ', 'VERB']);
const squash = (x: number) => x / Math.sqrt(x * x + 15);

/**
 * Words wink-nlp's general lexicon scores but that carry no judgement in employee comments ("I work on three
 * projects" is not positive). They are masked for the sentiment pass only.
 */
const neutralInContext =
  /\b(work|works|working|worked|decided|award|awards|feels|paying|settling|settle|kind of|free time|home)\b/gi;
/** "X, but Y": the clause after the contrast carries the judgement. */
const contrast = /\b(but|however|though|yet)\b/gi;
const negator = /\b(not|no|never|nobody|nothing|none|no one|without|\w+n't|cannot)\b/i;

/** `parsed`: the text already read, reused when no word needs masking (one parse instead of two). */
function sentimentOf(text: string, parsed?: Document): number {
  const { its } = nlp();
  const masked = text.replace(neutralInContext, (w) => (w.toLowerCase() === 'home' ? 'house' : 'it'));
  const doc = parsed && masked === text ? parsed : nlp().readDoc(masked);
  const base = doc.out(its.sentiment) as number;
  const lower = text.toLowerCase();
  let extra = 0;
  let hits = 0;
  doc.tokens().each((token: ItemToken) => {
    if (token.out(its.type) !== 'word') return;
    const lemma = (token.out(its.lemma as never) as string).toLowerCase();
    const normal = (token.out(its.normal) as string).toLowerCase();
    const weight = workplaceLexicon[normal] ?? workplaceLexicon[lemma];
    if (weight === undefined) return;
    hits++;
    extra += token.out(its.negationFlag) ? -0.75 * weight : weight;
  });
  for (const [pattern, weight] of phrasePatterns) {
    if (!pattern.test(lower)) continue;
    hits++;
    extra += weight;
  }
  // A negated statement with no judgement word ("nobody tells us why") is a complaint in a survey.
  if (base === 0 && hits === 0 && negator.test(lower)) extra -= 1.5;
  return base + squash(extra);
}

/** wink-nlp's sentiment (−1…1) plus the workplace lexicon, phrases and sarcasm, combined into −1…1. */
export function analyseText(text: string): TextFeatures {
  const { its } = nlp();
  const doc = nlp().readDoc(text);
  const lower = text.toLowerCase();
  const terms: string[] = [];
  const forms = new Set<string>();
  let words = 0;
  let stopWords = 0;
  doc.tokens().each((token: ItemToken) => {
    if (token.out(its.type) !== 'word') return;
    words++;
    const lemma = (token.out(its.lemma as never) as string).toLowerCase();
    const normal = (token.out(its.normal) as string).toLowerCase();
    if (token.out(its.stopWordFlag)) stopWords++;
    forms.add(lemma).add(normal);
    if (normal.length > 3 && normal.endsWith('s')) forms.add(normal.slice(0, -1));
    const pos = token.out(its.pos) as string;
    if (contentPos.has(pos) && !token.out(its.stopWordFlag) && lemma.length > 2) terms.push(lemma);
  });
  let score: number;
  let cut = -1;
  for (const match of lower.matchAll(contrast)) if (match.index > 0) cut = match.index;
  if (cut > 0) {
    const before = sentimentOf(text.slice(0, cut));
    const after = sentimentOf(text.slice(cut));
    // A contrast after praise with no judgement word of its own ("great, but leadership keeps changing") is still the
    // point.
    score = after === 0 ? 0.25 * before - 0.3 : 0.25 * before + 0.75 * after;
  } else {
    score = sentimentOf(text, doc);
  }
  if (sarcasmPatterns.some((pattern) => pattern.test(lower))) score = Math.min(score, 0) - 0.5;
  score = Math.max(-1, Math.min(1, score));
  return {
    sentiment: Math.round(score * 1000) / 1000,
    terms,
    phrases: doc.customEntities().out(its.normal) as string[],
    forms,
    words,
    stopWords,
  };
}

let lexicon: Document | undefined;
/**
 * Whether a lower-case word is in the English model's vocabulary (about 87,000 words: "will", "bell", "rose"),
 * as opposed to words it has never seen ("priya", "raghunathan"). Redaction uses it to tell names that are also
 * common words from names that are only names.
 */
export function isEnglishWord(word: string): boolean {
  lexicon ??= nlp().readDoc('');
  return !lexicon.isOOV(word);
}

export type SentimentLabel = 'positive' | 'neutral' | 'negative';
/** Scores within ±0.05 are neutral (VADER's convention). */
export const labelOf = (score: number): SentimentLabel =>
  score > 0.05 ? 'positive' : score < -0.05 ? 'negative' : 'neutral';

/** Lemmas of the content words of a prompt (used to detect survey topics). */
export function lemmasOf(text: string): string[] {
  const { its } = nlp();
  const out: string[] = [];
  nlp()
    .readDoc(text)
    .tokens()
    .each((token: ItemToken) => {
      if (token.out(its.type) !== 'word') return;
      out.push((token.out(its.lemma as never) as string).toLowerCase());
    });
  return out;
}

/** A plain tokenization pass with the same library: the benchmark's baseline. */
export function tokenizeOnly(text: string): number {
  const { its } = nlp();
  return (nlp().readDoc(text).tokens().out(its.value) as string[]).length;
}
