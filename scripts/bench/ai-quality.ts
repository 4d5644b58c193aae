/**
 * Quality of the offline analyser on the labelled set `test/ai/data/comments.tsv` (label, topic, kind, text):
 * sentiment accuracy and macro-F1 against two baselines run on the same set — the AFINN-based `sentiment`
 * package and `vader-sentiment` (a JavaScript port of VADER) — and theme purity against the known topics.
 * Shared by the benchmark (scripts/bench/ai.ts) and the regression test (test/ai/quality.test.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyseOffline } from '../../server/src/modules/ai/offline-analyse.js';
import { analyseText, labelOf, type SentimentLabel } from '../../server/src/modules/ai/nlp.js';

const require = createRequire(import.meta.url);
const AfinnSentiment = require('sentiment') as new () => {
  analyze(text: string): { score: number; comparative: number };
};
const vader = require('vader-sentiment') as {
  SentimentIntensityAnalyzer: { polarity_scores(text: string): { compound: number } };
};

export interface LabelledComment {
  label: SentimentLabel;
  topic: string;
  kind: 'plain' | 'negation' | 'sarcasm' | 'mixed' | 'short';
  text: string;
}

export const dataPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/ai/data/comments.tsv');

export function loadLabelled(): LabelledComment[] {
  return readFileSync(dataPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => {
      const [label, topic, kind, text] = line.split('\t');
      return { label: label as SentimentLabel, topic: topic!, kind: kind as LabelledComment['kind'], text: text! };
    });
}

export type Classifier = (text: string) => SentimentLabel;

const afinn = new AfinnSentiment();
export const classifiers: Record<string, Classifier> = {
  'offline (wink-nlp + workplace lexicon)': (text) => labelOf(analyseText(text).sentiment),
  'AFINN (`sentiment` 5.0.2)': (text) => {
    const score = afinn.analyze(text).score;
    return score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral';
  },
  'VADER (`vader-sentiment` 1.1.3)': (text) => labelOf(vader.SentimentIntensityAnalyzer.polarity_scores(text).compound),
};

export interface Scores {
  accuracy: number;
  macroF1: number;
  n: number;
  byKind: Record<string, number>;
}

const labels: SentimentLabel[] = ['positive', 'neutral', 'negative'];

export function score(classify: Classifier, set: readonly LabelledComment[]): Scores {
  const predicted = set.map((c) => classify(c.text));
  const correct = predicted.filter((p, i) => p === set[i]!.label).length;
  const f1s = labels.map((label) => {
    const tp = predicted.filter((p, i) => p === label && set[i]!.label === label).length;
    const fp = predicted.filter((p, i) => p === label && set[i]!.label !== label).length;
    const fn = predicted.filter((p, i) => p !== label && set[i]!.label === label).length;
    const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
    const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
    return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  });
  const byKind: Record<string, number> = {};
  for (const kind of [...new Set(set.map((c) => c.kind))].sort()) {
    const idx = set.map((c, i) => (c.kind === kind ? i : -1)).filter((i) => i >= 0);
    byKind[kind] = idx.filter((i) => predicted[i] === set[i]!.label).length / idx.length;
  }
  return {
    accuracy: correct / set.length,
    macroF1: f1s.reduce((a, b) => a + b, 0) / labels.length,
    n: set.length,
    byKind,
  };
}

export interface ThemeQuality {
  /** Comments in a theme whose known topic is the theme's majority topic, over the comments in themes. */
  purity: number;
  /** Comments placed in some theme. */
  coverage: number;
  /** Comments in a theme whose name is their known topic (taxonomy themes only). */
  nameAccuracy: number;
  themes: number;
}

export function themeQuality(set: readonly LabelledComment[]): ThemeQuality {
  const findings = analyseOffline({
    surveyTitle: 'benchmark',
    questions: [],
    comments: set.map((c) => ({ questionId: 'q', text: c.text })),
    respondentNames: [],
  });
  let inThemes = 0;
  let majority = 0;
  let named = 0;
  for (const theme of findings.themes) {
    const counts = new Map<string, number>();
    for (const i of theme.comments) counts.set(set[i]!.topic, (counts.get(set[i]!.topic) ?? 0) + 1);
    inThemes += theme.comments.length;
    majority += Math.max(...counts.values());
    named += counts.get(theme.name) ?? 0;
  }
  return {
    purity: majority / inThemes,
    coverage: inThemes / set.length,
    nameAccuracy: named / inThemes,
    themes: findings.themes.length,
  };
}
