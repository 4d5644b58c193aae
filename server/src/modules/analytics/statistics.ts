/**
 * Figures from exact histograms (value → count) that one aggregate query returns per question: integer
 * answers make the histogram a lossless summary, so mean, median (as percentile_cont(0.5)), standard
 * deviation, NPS and its margin of error computed from it equal those computed from the raw answers.
 */
import type { components } from '../../generated/openapi.js';

type Question = components['schemas']['Question'];
type QuestionStats = components['schemas']['QuestionStats'];
export type Histogram = Map<number, number>;

/** Marks "this multiple_choice question was answered" in the cells encoding (see the migration). */
export const ANSWERED_MARK = 99999;
export const CELL_BASE = 100000;

/** Half away from zero, the same for negative figures as for positive ones (Math.round takes −0.5 up to −0). */
export const round = (value: number, decimals: number) => {
  const factor = 10 ** decimals;
  return Math.sign(value) * (Math.round((Math.abs(value) + Number.EPSILON) * factor) / factor) || 0;
};

export function countOf(histogram: Histogram): number {
  let n = 0;
  for (const count of histogram.values()) n += count;
  return n;
}

export function meanOf(histogram: Histogram): number | null {
  let n = 0;
  let sum = 0;
  for (const [value, count] of histogram) {
    n += count;
    sum += value * count;
  }
  return n === 0 ? null : sum / n;
}

/** The value at 1-based `rank` of the answers, `values` being the histogram's keys in order. */
function valueAtRank(histogram: Histogram, values: number[], rank: number): number {
  let seen = 0;
  for (const value of values) {
    seen += histogram.get(value)!;
    if (seen >= rank) return value;
  }
  return values[values.length - 1]!;
}

/** percentile_cont(0.5): the middle value, or the mean of the two middle values. */
export function medianOf(histogram: Histogram): number | null {
  const n = countOf(histogram);
  if (n === 0) return null;
  const values = [...histogram.keys()].sort(ascending);
  return n % 2 === 1
    ? valueAtRank(histogram, values, (n + 1) / 2)
    : (valueAtRank(histogram, values, n / 2) + valueAtRank(histogram, values, n / 2 + 1)) / 2;
}

function ascending(a: number, b: number): number {
  return a - b;
}

/** Sample standard deviation (n − 1), from the deviations to the mean (no cancellation). */
export function standardDeviationOf(histogram: Histogram): number | null {
  const n = countOf(histogram);
  const mean = meanOf(histogram);
  if (n < 2 || mean === null) return null;
  let squares = 0;
  for (const [value, count] of histogram) squares += count * (value - mean) ** 2;
  return Math.sqrt(squares / (n - 1));
}

export interface NpsFigures {
  n: number;
  promoters: number;
  passives: number;
  detractors: number;
  score: number | null;
  marginOfError: number | null;
}

export function npsOf(histogram: Histogram): NpsFigures {
  let promoters = 0;
  let passives = 0;
  let detractors = 0;
  for (const [value, count] of histogram) {
    if (value >= 9) promoters += count;
    else if (value >= 7) passives += count;
    else detractors += count;
  }
  const n = promoters + passives + detractors;
  if (n === 0) return { n, promoters, passives, detractors, score: null, marginOfError: null };
  const p = promoters / n;
  const d = detractors / n;
  return {
    n,
    promoters,
    passives,
    detractors,
    score: 100 * (p - d),
    marginOfError: 1.96 * 100 * Math.sqrt(Math.max(0, p + d - (p - d) ** 2) / n),
  };
}

/** Favourable answers: 9–10 on NPS, the top two fifths of a rating scale (4–5 on 1–5). */
export function favourableCut(question: Question): number {
  if (question.type === 'nps') return 8;
  if (question.type === 'rating') return question.min + 0.6 * (question.max - question.min);
  return Number.POSITIVE_INFINITY;
}

export function favourableShareOf(histogram: Histogram, question: Question): number | null {
  const n = countOf(histogram);
  if (n === 0) return null;
  const cut = favourableCut(question);
  let favourable = 0;
  for (const [value, count] of histogram) if (value > cut) favourable += count;
  return (100 * favourable) / n;
}

/** Every value of a scale with its count (0 for values nobody gave). A plain loop: this runs per group and question. */
function distributionOf(histogram: Histogram, min: number, max: number): { value: number; count: number }[] {
  const distribution: { value: number; count: number }[] = [];
  for (let value = min; value <= max; value++) distribution.push({ value, count: histogram.get(value) ?? 0 });
  return distribution;
}

/**
 * The statistics of one question from its histogram. Object literals without spread: V8 (Node 20) builds
 * `{ ...base, more }` ~80× slower, and this runs per group and question.
 */
export function questionStats(question: Question, histogram: Histogram = new Map()): QuestionStats {
  switch (question.type) {
    case 'nps': {
      const nps = npsOf(histogram);
      return {
        questionId: question.id,
        text: question.text,
        type: 'nps',
        answeredCount: nps.n,
        score: nps.score === null ? null : round(nps.score, 1),
        marginOfError: nps.marginOfError === null ? null : round(nps.marginOfError, 1),
        promoters: nps.promoters,
        passives: nps.passives,
        detractors: nps.detractors,
        distribution: distributionOf(histogram, 0, 10),
      };
    }
    case 'rating': {
      const mean = meanOf(histogram);
      const median = medianOf(histogram);
      const sd = standardDeviationOf(histogram);
      return {
        questionId: question.id,
        text: question.text,
        type: 'rating',
        answeredCount: countOf(histogram),
        min: question.min,
        max: question.max,
        average: mean === null ? null : round(mean, 2),
        median,
        standardDeviation: sd === null ? null : round(sd, 2),
        distribution: distributionOf(histogram, question.min, question.max),
      };
    }
    case 'single_choice':
    case 'multiple_choice': {
      const answered = question.type === 'multiple_choice' ? (histogram.get(ANSWERED_MARK) ?? 0) : countOf(histogram);
      return {
        questionId: question.id,
        text: question.text,
        type: question.type,
        answeredCount: answered,
        choices: question.choices.map((choice, index) => {
          const count = histogram.get(index) ?? 0;
          return {
            choiceId: choice.id,
            label: choice.label,
            count,
            percentage: answered === 0 ? 0 : round((100 * count) / answered, 1),
          };
        }),
      };
    }
    case 'text': {
      const mean = meanOf(histogram);
      return {
        questionId: question.id,
        text: question.text,
        type: 'text',
        answeredCount: countOf(histogram),
        averageLength: mean === null ? null : round(mean, 1),
      };
    }
  }
}

/** Splits (code, count) rows into one histogram per question position. */
export function histogramsByPosition(rows: Iterable<{ code: number; n: number }>): Map<number, Histogram> {
  const byPosition = new Map<number, Histogram>();
  for (const { code, n } of rows) {
    const position = Math.floor(code / CELL_BASE);
    let histogram = byPosition.get(position);
    if (!histogram) byPosition.set(position, (histogram = new Map()));
    histogram.set(code % CELL_BASE, (histogram.get(code % CELL_BASE) ?? 0) + n);
  }
  return byPosition;
}
