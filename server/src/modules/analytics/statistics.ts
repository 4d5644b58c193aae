/**
 * Figures from exact histograms (value → count) that one aggregate query returns per question: integer
 * answers make the histogram a lossless summary, so mean, median (as percentile_cont(0.5)), standard
 * deviation, NPS and its margin of error computed from it equal those computed from the raw answers.
 */
import type { Question, QuestionStats } from '../../generated/openapi.js';

export type Histogram = Map<number, number>;

/** Marks "this question was answered" in the cells encoding of multiple choice, matrix, ranking and number. */
export const ANSWERED_MARK = 99999;
export const CELL_BASE = 100000;
/**
 * N/A answers and "Other" choices are counted at position `MARKS_POSITION + position`, apart from the question's
 * own histogram, so that no figure of the scale ever includes them (see the encoding's migration): key 0 an N/A of
 * nps or rating, key 1 an "Other" choice, `MATRIX_NA + row` a matrix row's N/A.
 */
export const MARKS_POSITION = 10000;
const NOT_APPLICABLE_MARK = 0;
const OTHER_MARK = 1;
const MATRIX_NA = 1000;
/** Matrix cells are `row * MATRIX_ROW + value`; ranking cells `choice * RANKING_CHOICE + rank`. */
const MATRIX_ROW = 1000;
const RANKING_CHOICE = 100;
/** Date cells are days since 1900-01-01. */
const DAY_ZERO = Date.UTC(1900, 0, 1);

/** The answers of a number question, which cells do not hold (see `numberValues`). */
export type NumberAnswers = readonly number[];

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
export function questionStats(
  question: Question,
  histogram: Histogram = new Map(),
  marks: Histogram = new Map(),
  numbers: NumberAnswers = [],
): QuestionStats {
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
        ...notApplicableOf(question, marks),
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
        ...notApplicableOf(question, marks),
        distribution: distributionOf(histogram, question.min, question.max),
      };
    }
    case 'single_choice':
    case 'multiple_choice': {
      const others = marks.get(OTHER_MARK) ?? 0;
      // A single choice of "Other" has no choice position in the histogram; it answered the question all the same
      // (as a multiple choice selecting only "Other" does, through its answered mark).
      const answered =
        question.type === 'multiple_choice' ? (histogram.get(ANSWERED_MARK) ?? 0) : countOf(histogram) + others;
      return {
        questionId: question.id,
        text: question.text,
        type: question.type,
        answeredCount: answered,
        ...(question.allowOther === true ? { otherCount: others } : {}),
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
    case 'matrix':
      return matrixStats(question, histogram, marks);
    case 'ranking':
      return rankingStats(question, histogram);
    case 'number':
      return numberStats(question, numbers);
    case 'date':
      return dateStats(question, histogram);
  }
}

const notApplicableOf = (question: Question, marks: Histogram) =>
  'allowNotApplicable' in question && question.allowNotApplicable === true
    ? { notApplicableCount: marks.get(NOT_APPLICABLE_MARK) ?? 0 }
    : {};

/** The part of a question's histogram under `part` (a matrix row, a ranked choice), keyed by what follows it. */
function partOf(histogram: Histogram, width: number, part: number): Histogram {
  const out: Histogram = new Map();
  for (const [code, count] of histogram)
    if (code !== ANSWERED_MARK && Math.floor(code / width) === part) out.set(code % width, count);
  return out;
}

/** The histogram of one matrix row (values of its scale, or column positions). */
export const matrixRowHistogram = (histogram: Histogram, row: number) => partOf(histogram, MATRIX_ROW, row);

/**
 * The cell codes of one matrix row of the question at 0-based `position`: a response holds at most one code in
 * [from, to), its value plus `from`; an N/A row holds none there (it is a mark, at `MARKS_POSITION + position`).
 */
export function matrixRowCodes(position: number, row: number): { from: number; to: number } {
  const from = position * CELL_BASE + row * MATRIX_ROW;
  return { from, to: from + MATRIX_ROW };
}

function matrixStats(question: Extract<Question, { type: 'matrix' }>, histogram: Histogram, marks: Histogram) {
  return {
    questionId: question.id,
    text: question.text,
    type: 'matrix' as const,
    answeredCount: histogram.get(ANSWERED_MARK) ?? 0,
    rows: question.rows.map((row, index) => {
      const cells = partOf(histogram, MATRIX_ROW, index);
      const answered = countOf(cells);
      const mean = question.scale ? meanOf(cells) : null;
      return {
        rowId: row.id,
        text: row.text,
        answeredCount: answered,
        notApplicableCount: marks.get(MATRIX_NA + index) ?? 0,
        average: mean === null ? null : round(mean, 2),
        median: question.scale ? medianOf(cells) : null,
        distribution: question.scale ? distributionOf(cells, question.scale.min, question.scale.max) : [],
        columns: (question.columns ?? []).map((column, k) => {
          const count = cells.get(k) ?? 0;
          return {
            columnId: column.id,
            label: column.label,
            count,
            percentage: answered === 0 ? 0 : round((100 * count) / answered, 1),
          };
        }),
      };
    }),
  };
}

function rankingStats(question: Extract<Question, { type: 'ranking' }>, histogram: Histogram) {
  const answered = histogram.get(ANSWERED_MARK) ?? 0;
  return {
    questionId: question.id,
    text: question.text,
    type: 'ranking' as const,
    answeredCount: answered,
    choices: question.choices.map((choice, index) => {
      const ranks = partOf(histogram, RANKING_CHOICE, index);
      const mean = meanOf(ranks);
      const first = ranks.get(1) ?? 0;
      return {
        choiceId: choice.id,
        label: choice.label,
        meanRank: mean === null ? null : round(mean, 2),
        rankedFirst: first,
        rankedFirstShare: answered === 0 ? 0 : round((100 * first) / answered, 1),
      };
    }),
  };
}

/** Up to ten bins of equal width from the smallest to the largest answer; the last bin holds the largest. */
function numberStats(question: Extract<Question, { type: 'number' }>, numbers: NumberAnswers) {
  const base = { questionId: question.id, text: question.text, type: 'number' as const, answeredCount: numbers.length };
  if (numbers.length === 0) return { ...base, min: null, max: null, mean: null, median: null, histogram: [] };
  const sorted = [...numbers].sort(ascending);
  const min = sorted[0]!;
  const max = sorted[sorted.length - 1]!;
  const n = sorted.length;
  const median = n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const bins = min === max ? 1 : Math.min(10, question.integer ? max - min + 1 : 10);
  const width = (max - min) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of sorted) counts[width === 0 ? 0 : Math.min(bins - 1, Math.floor((v - min) / width))]!++;
  return {
    ...base,
    min,
    max,
    mean: round(mean, 4),
    median,
    histogram: counts.map((count, k) => ({
      from: round(min + k * width, 6),
      to: k === bins - 1 ? max : round(min + (k + 1) * width, 6),
      count,
    })),
  };
}

const dayText = (days: number) => new Date(DAY_ZERO + days * 86_400_000).toISOString().slice(0, 10);

/** Dates from their day histogram: exact min, max and median, and counts per month (or per year over ten years). */
function dateStats(question: Extract<Question, { type: 'date' }>, histogram: Histogram) {
  const days = [...histogram.keys()].filter((d) => d !== ANSWERED_MARK).sort(ascending);
  const n = days.reduce((sum, d) => sum + histogram.get(d)!, 0);
  const base = { questionId: question.id, text: question.text, type: 'date' as const, answeredCount: n };
  if (n === 0) return { ...base, min: null, max: null, median: null, histogram: [] };
  const day = new Map(days.map((d) => [d, histogram.get(d)!]));
  const first = new Date(DAY_ZERO + days[0]! * 86_400_000);
  const last = new Date(DAY_ZERO + days[days.length - 1]! * 86_400_000);
  const monthly = last.getUTCFullYear() - first.getUTCFullYear() < 10;
  const bins: { from: string; to: string; count: number }[] = [];
  let start = Date.UTC(first.getUTCFullYear(), monthly ? first.getUTCMonth() : 0, 1);
  while (start <= last.getTime()) {
    const from = new Date(start);
    const end = monthly
      ? Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1)
      : Date.UTC(from.getUTCFullYear() + 1, 0, 1);
    let count = 0;
    for (const [d, c] of day) {
      const at = DAY_ZERO + d * 86_400_000;
      if (at >= start && at < end) count += c;
    }
    bins.push({ from: from.toISOString().slice(0, 10), to: new Date(end).toISOString().slice(0, 10), count });
    start = end;
  }
  return {
    ...base,
    min: dayText(days[0]!),
    max: dayText(days[days.length - 1]!),
    median: dayText(valueAtRank(day, days, Math.ceil(n / 2))),
    histogram: bins,
  };
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
