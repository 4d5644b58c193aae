/**
 * The model of the data path: what the product promises, written down independently of the server's code.
 *
 * - Every response is segmented by its respondent as they were when asked: the snapshot of the distribution it
 *   answers, else the respondent's record when it was stored, else nobody (the `null` group). Nothing later moves it.
 * - The distribution a response answers: the answer page's; for an API submission naming a respondent, the latest
 *   distribution of the survey that reached them (recipient sent or responded, sent before); else none.
 * - Static analytics: exact figures over the responses in scope, the anonymity threshold on the whole result and
 *   on every group, with the subtraction guard.
 * - Exports: a full export holds every response acknowledged before it and not deleted; an increment what was
 *   acknowledged since the export it continues; the deletions lists likewise. In CSV a matrix is a column per row,
 *   a ranking a column per choice (its place), "Other"'s text a column after its question, N/A an empty cell; in
 *   JSON and NDJSON N/A is `null` with `notApplicable: true` (a matrix row's N/A a `null` row).
 * - Privacy requests (the reference's *Privacy and compliance*): a person is the respondent ids the subject names;
 *   an erasure of `identity_and_responses` deletes their responses as `deleteResponse` does, one of `identity`
 *   keeps them without the respondent id, and every figure stays (they still count as one respondent); both delete
 *   the record, the recipient rows, the export and access files that held them, and scrub the events.
 * - The survey asks every question type whose figures differ: NPS, a rating and a Likert grid with N/A, a grid of
 *   labelled columns with N/A, a ranking, a number, a date, and a single choice with "Other". A matrix row is a
 *   rating (or a single choice) of its own, N/A and unanswered rows apart; a ranking gives the mean rank and the
 *   share ranked first; number and date their count, min, max, mean or median, and bins.
 *
 * Pure functions over plain data: the commands (commands.ts) keep the model up to date and compare.
 */

export const DEPARTMENTS = ['Eng', 'Ops', 'Sales'] as const;
export type Dept = string | null;

/** The population of one run: P-00 … P-11; P-11's address bounces at the SMTP server. */
export const POPULATION = 12;
export const BOUNCING_PERSON = 11;
export const personId = (i: number) => `P-${String(i).padStart(2, '0')}`;
/** Respondent ids that never exist as respondents. */
export const strangerId = (i: number) => `X-${i}`;

/** A Likert grid (a matrix on a 1–5 scale, N/A allowed), a grid of labelled columns, a ranking, a number, a date. */
export const GRID_ROWS = [
  { id: 'clear', text: 'I know what is expected of me' },
  { id: 'tools', text: 'I have the tools I need' },
  { id: 'grow', text: 'I can grow here' },
];
export const OFTEN_ROWS = [
  { id: 'meetings', text: 'Team meetings' },
  { id: 'reviews', text: 'Reviews' },
];
export const OFTEN_COLUMNS = [
  { id: 'never', label: 'Never' },
  { id: 'monthly', label: 'Monthly' },
  { id: 'weekly', label: 'Weekly' },
];
export const RANK_CHOICES = [
  { id: 'pay', label: 'Pay' },
  { id: 'time', label: 'Time off' },
  { id: 'growth', label: 'Growth' },
];
/** A single choice with "Other" (its choice id `other`, its text beside the value). */
export const WHERE_CHOICES = [
  { id: 'office', label: 'Office' },
  { id: 'home', label: 'Home' },
];
export const GRID_MIN = 1;
export const GRID_MAX = 5;
export const HOURS_MIN = 0;
export const HOURS_MAX = 80;
export const DATE_MIN = '1990-01-01';
export const DATE_MAX = '2026-12-31';

export const QUESTIONS = [
  { id: 'nps', type: 'nps', text: 'How likely are you to recommend us?', required: false },
  { id: 'rating', type: 'rating', text: 'I have the tools I need.', required: false, allowNotApplicable: true },
  {
    id: 'grid',
    type: 'matrix',
    text: 'How much do you agree?',
    required: false,
    rows: GRID_ROWS,
    scale: { min: GRID_MIN, max: GRID_MAX },
    allowNotApplicable: true,
  },
  {
    id: 'often',
    type: 'matrix',
    text: 'How often?',
    required: false,
    rows: OFTEN_ROWS,
    columns: OFTEN_COLUMNS,
    allowNotApplicable: true,
  },
  { id: 'rank', type: 'ranking', text: 'Rank these benefits', required: false, choices: RANK_CHOICES },
  { id: 'hours', type: 'number', text: 'Hours of focus time a week', required: false, min: HOURS_MIN, max: HOURS_MAX },
  { id: 'started', type: 'date', text: 'Your start date', required: false, min: DATE_MIN, max: DATE_MAX },
  {
    id: 'where',
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: WHERE_CHOICES,
    allowOther: true,
  },
] as const;
/** The text of question `id`. */
const textOf = (id: string) => QUESTIONS.find((q) => q.id === id)!.text;
/** A rating answer: a value of the scale, N/A, or none. */
export type RatingAnswer = number | 'na' | null;
/**
 * One response's answers; null: left out. A matrix answer holds its answered rows only (a value, or N/A); a
 * ranking every choice id, first first; `hours` a multiple of ½ (exact in binary, so the model's sums are exact);
 * `where` a choice id or `other`, with `other` its text.
 */
export interface ModelAnswer {
  nps: number | null;
  rating: RatingAnswer;
  grid: Record<string, number | 'na'> | null;
  often: Record<string, string> | null;
  rank: string[] | null;
  hours: number | null;
  started: string | null;
  where: string | null;
  other: string | null;
}
/** Nothing answered: the base of a hand-written answer. */
export const NO_ANSWER: ModelAnswer = {
  nps: null,
  rating: null,
  grid: null,
  often: null,
  rank: null,
  hours: null,
  started: null,
  where: null,
  other: null,
};
export const RATING_MIN = 1;
export const RATING_MAX = 5;

/** A respondent as analytics sees them for one response (frozen when asked). */
export interface Subject {
  department: Dept;
}

export interface MPerson {
  externalId: string;
  email: string;
  /** The current record (only the department varies), or null when there is none. */
  record: { department: Dept } | null;
}

export type SurveyStatus = 'draft' | 'active' | 'paused' | 'closed';

export interface MSurvey {
  /** Creation order in the run (s0, s1, …). */
  index: number;
  id: string;
  status: SurveyStatus;
  allowMultiple: boolean;
  anonymous: boolean;
  distributions: MDistribution[];
  exports: MExport[];
}

export interface MRecipient {
  externalId: string;
  email: string;
  /** The snapshot taken at the send. */
  department: Dept;
  status: 'sent' | 'responded' | 'bounced';
  /** Model time of the send when it reached the person (sent_at), else null (bounced). */
  reachedAt: number | null;
  link: string;
}

export interface MDistribution {
  index: number;
  id: string;
  survey: MSurvey;
  method: 'link' | 'email';
  /** By respondent id. */
  recipients: Map<string, MRecipient>;
}

export interface MExport {
  id: string;
  /** Model time of the request: responses acknowledged before are in it (or in its chain's earlier exports). */
  at: number;
  base: MExport | null;
  /** Its file was deleted by an erasure (410 `export_erased`); it can still be continued. */
  erased: boolean;
}

export interface MResponse extends ModelAnswer {
  id: string;
  survey: MSurvey;
  respondent: string | null;
  distributionId: string | null;
  subject: Subject | null;
  submittedAt: string;
  channel: 'api' | 'link';
  /** Model time of the acknowledgement. */
  acked: number;
  /** Model time of the deletion, or null. */
  deleted: number | null;
  /**
   * Set by an erasure of `identity` (at model time `at`), which took the respondent: the response still counts as
   * that person among distinct respondents, since every figure stays as it was.
   */
  forgotten: { respondent: string; at: number } | null;
}

/** Whom a privacy request names. */
export type MSubject = { kind: 'externalId'; value: string } | { kind: 'email'; value: string };

/** A completed access request that made a file. */
export interface MAccess {
  id: string;
  subject: MSubject;
  /** Its file was deleted by an erasure of the same person (410 `export_erased`). */
  erased: boolean;
}

/** A `response.submitted` event that names a respondent (null once an erasure of `identity` took it). */
export interface MEvent {
  responseId: string;
  respondent: string | null;
}

export interface Model {
  /** Distinguishes this run's e-mail addresses at the shared SMTP server. */
  tag: string;
  threshold: number;
  people: MPerson[];
  surveys: MSurvey[];
  responses: MResponse[];
  /** The `response.submitted` events that named a respondent when they were recorded (and were not erased). */
  events: MEvent[];
  /** Access requests' files. */
  accessFiles: MAccess[];
  /** Model time: every acknowledged write takes the next tick. */
  clock: number;
}

export const tick = (m: Model) => ++m.clock;

// ---------------------------------------------------------------------------------------------------------------
// Filters on the department (the targeting language's rules for a text field)

export type DeptFilter =
  | { operator: 'equals'; value: string }
  | { operator: 'in'; value: string[] }
  | { operator: 'contains'; value: string }
  | { operator: 'gte' | 'lte'; value: string }
  | { operator: 'exists'; value: boolean };

/** Code-point order, as the service's C collation compares text. */
const codePointCompare = (a: string, b: string) => {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

/** A respondent without a value never matches equals, in, contains, gte or lte; exists tests for a value. */
export function matches(filter: DeptFilter, department: Dept): boolean {
  if (filter.operator === 'exists') return filter.value ? department !== null : department === null;
  if (department === null) return false;
  switch (filter.operator) {
    case 'equals':
      return department === filter.value;
    case 'in':
      return filter.value.includes(department);
    case 'contains':
      return department.toLowerCase().includes(filter.value.toLowerCase());
    case 'gte':
      return codePointCompare(department, filter.value) >= 0;
    case 'lte':
      return codePointCompare(department, filter.value) <= 0;
  }
}

export const describeFilter = (f: DeptFilter) => `department ${f.operator} ${JSON.stringify(f.value)}`;

// ---------------------------------------------------------------------------------------------------------------
// Responses

export const live = (m: Model, survey: MSurvey) => m.responses.filter((r) => r.survey === survey && r.deleted === null);

/** N/A is the value null, in a whole answer or in a matrix row. */
const naNull = <T>(v: T | 'na') => (v === 'na' ? null : v);

/** The answers as submitted and as exported: in the survey's question order, unanswered ones left out. */
export function answersOf(r: ModelAnswer) {
  const answers: {
    questionId: string;
    value: number | string | string[] | Record<string, number | string | null> | null;
    other?: string;
  }[] = [];
  if (r.nps !== null) answers.push({ questionId: 'nps', value: r.nps });
  if (r.rating !== null) answers.push({ questionId: 'rating', value: naNull(r.rating) });
  for (const id of ['grid', 'often'] as const) {
    const cells = r[id];
    if (cells !== null)
      answers.push({
        questionId: id,
        value: Object.fromEntries(Object.entries(cells).map(([row, v]) => [row, naNull(v)])),
      });
  }
  if (r.rank !== null) answers.push({ questionId: 'rank', value: r.rank });
  if (r.hours !== null) answers.push({ questionId: 'hours', value: r.hours });
  if (r.started !== null) answers.push({ questionId: 'started', value: r.started });
  if (r.where !== null)
    answers.push({ questionId: 'where', value: r.where, ...(r.other !== null ? { other: r.other } : {}) });
  return answers;
}

/**
 * The distribution an API submission by `respondent` answers: the latest of the survey whose recipient row for
 * them was sent (status sent or responded, with a send time) before now.
 */
export function latestReaching(
  survey: MSurvey,
  respondent: string,
): { distribution: MDistribution; recipient: MRecipient } | undefined {
  let best: { distribution: MDistribution; recipient: MRecipient } | undefined;
  for (const distribution of survey.distributions) {
    const recipient = distribution.recipients.get(respondent);
    if (!recipient || recipient.reachedAt === null || (recipient.status !== 'sent' && recipient.status !== 'responded'))
      continue;
    if (!best || recipient.reachedAt > best.recipient.reachedAt!) best = { distribution, recipient };
  }
  return best;
}

// ---------------------------------------------------------------------------------------------------------------
// Exact arithmetic and rounding: half away from zero, decided on exact rationals (numerator / denominator).

/**
 * How exact halves are rounded: `away` from zero (the model: −93.75 → −93.8 as 93.75 → 93.8), or `up` towards
 * +∞ (JavaScript's Math.round: −93.75 → −93.7), only used to name a difference (see commands.ts).
 */
export type Halves = 'away' | 'up';

/** round(numerator / denominator, decimals) for integers with denominator > 0, decided exactly. */
export function roundRational(
  numerator: number,
  denominator: number,
  decimals: number,
  halves: Halves = 'away',
): number {
  const factor = 10 ** decimals;
  const scaled = numerator * factor; // exact: small integers
  if (halves === 'up') return Math.floor((2 * scaled + denominator) / (2 * denominator)) / factor;
  const magnitude = Math.abs(scaled);
  // floor((2·|x|·factor + d) / (2d)) = |x|·factor rounded half up
  const rounded = Math.floor((2 * magnitude + denominator) / (2 * denominator));
  return (scaled < 0 ? -rounded : rounded) / factor;
}

/** For irrational figures (a square root): the nearest, half away from zero. */
function roundReal(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  const rounded = Math.round(Math.abs(value) * factor) / factor;
  return value < 0 ? -rounded : rounded;
}

export function npsStats(values: number[], halves: Halves = 'away') {
  const promoters = values.filter((v) => v >= 9).length;
  const passives = values.filter((v) => v === 7 || v === 8).length;
  const detractors = values.filter((v) => v <= 6).length;
  const n = values.length;
  let marginOfError: number | null = null;
  if (n > 0) {
    const p = promoters / n;
    const d = detractors / n;
    marginOfError = roundReal(1.96 * 100 * Math.sqrt(Math.max(0, p + d - (p - d) ** 2) / n), 1);
  }
  return {
    questionId: 'nps',
    text: textOf('nps'),
    type: 'nps',
    answeredCount: n,
    score: n === 0 ? null : roundRational(100 * (promoters - detractors), n, 1, halves),
    marginOfError,
    promoters,
    passives,
    detractors,
    distribution: Array.from({ length: 11 }, (_, value) => ({
      value,
      count: values.filter((v) => v === value).length,
    })),
  };
}

export function ratingStats(values: number[], notApplicable = 0) {
  const n = values.length;
  const sum = values.reduce((a, b) => a + b, 0);
  const median = medianOf(values);
  let standardDeviation: number | null = null;
  if (n >= 2) {
    // Σ(x − mean)² = (nΣx² − (Σx)²) / n, exact in integers; the square root last.
    const squares = values.reduce((a, v) => a + v * v, 0);
    const variance = (n * squares - sum * sum) / (n * (n - 1));
    standardDeviation = roundReal(Math.sqrt(variance), 2);
  }
  return {
    questionId: 'rating',
    text: textOf('rating'),
    type: 'rating',
    answeredCount: n,
    min: RATING_MIN,
    max: RATING_MAX,
    average: n === 0 ? null : roundRational(sum, n, 2),
    median,
    standardDeviation,
    notApplicableCount: notApplicable,
    distribution: Array.from({ length: RATING_MAX - RATING_MIN + 1 }, (_, i) => ({
      value: RATING_MIN + i,
      count: values.filter((v) => v === RATING_MIN + i).length,
    })),
  };
}

/** The median as percentile_cont(0.5): the middle value, or the mean of the two middle ones. */
function medianOf(values: number[]): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  return n === 0 ? null : n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

const sumOf = (values: number[]) => values.reduce((a, b) => a + b, 0);
/** A share in percent, one decimal; 0 of nobody. */
const percent = (count: number, of: number) => (of === 0 ? 0 : roundRational(100 * count, of, 1));

/** The cells of one matrix row over the responses that answered the matrix. */
const rowCells = <T>(answers: (Record<string, T | 'na'> | null)[], row: string) =>
  answers.flatMap((a) => (a === null || !(row in a) ? [] : [a[row]!]));

/** A Likert grid: each row like a rating of the scale (N/A apart); the question answered by any row, N/A or not. */
export function gridStats(answers: (Record<string, number | 'na'> | null)[]) {
  return {
    questionId: 'grid',
    text: textOf('grid'),
    type: 'matrix',
    answeredCount: answers.filter((a) => a !== null).length,
    rows: GRID_ROWS.map((row) => {
      const cells = rowCells(answers, row.id);
      const values = cells.filter((v): v is number => v !== 'na');
      return {
        rowId: row.id,
        text: row.text,
        answeredCount: values.length,
        notApplicableCount: cells.length - values.length,
        average: values.length === 0 ? null : roundRational(sumOf(values), values.length, 2),
        median: medianOf(values),
        distribution: Array.from({ length: GRID_MAX - GRID_MIN + 1 }, (_, i) => ({
          value: GRID_MIN + i,
          count: values.filter((v) => v === GRID_MIN + i).length,
        })),
        columns: [],
      };
    }),
  };
}

/** A grid of labelled columns: each row like a single choice (N/A apart). */
export function oftenStats(answers: (Record<string, string> | null)[]) {
  return {
    questionId: 'often',
    text: textOf('often'),
    type: 'matrix',
    answeredCount: answers.filter((a) => a !== null).length,
    rows: OFTEN_ROWS.map((row) => {
      const cells = rowCells(answers, row.id);
      const chosen = cells.filter((v) => v !== 'na');
      return {
        rowId: row.id,
        text: row.text,
        answeredCount: chosen.length,
        notApplicableCount: cells.length - chosen.length,
        average: null,
        median: null,
        distribution: [],
        columns: OFTEN_COLUMNS.map((column) => {
          const count = chosen.filter((v) => v === column.id).length;
          return { columnId: column.id, label: column.label, count, percentage: percent(count, chosen.length) };
        }),
      };
    }),
  };
}

/** Per choice: its mean rank (1 = first) and how often it came first. */
export function rankStats(rankings: string[][]) {
  const n = rankings.length;
  return {
    questionId: 'rank',
    text: textOf('rank'),
    type: 'ranking',
    answeredCount: n,
    choices: RANK_CHOICES.map((choice) => {
      const first = rankings.filter((r) => r[0] === choice.id).length;
      return {
        choiceId: choice.id,
        label: choice.label,
        meanRank: n === 0 ? null : roundRational(sumOf(rankings.map((r) => r.indexOf(choice.id) + 1)), n, 2),
        rankedFirst: first,
        rankedFirstShare: percent(first, n),
      };
    }),
  };
}

/**
 * A number question (not whole-number): count, min, max, the mean to four decimals, the median, and ten bins of
 * equal width from min to max (the last holding max), one bin when every answer is the same. Answers are
 * multiples of ½, so twice them are integers and every figure below is decided exactly.
 */
export function hoursStats(values: number[]) {
  const n = values.length;
  const base = { questionId: 'hours', text: textOf('hours'), type: 'number', answeredCount: n };
  if (n === 0) return { ...base, min: null, max: null, mean: null, median: null, histogram: [] };
  const min = Math.min(...values);
  const max = Math.max(...values);
  let histogram: { from: number; to: number; count: number }[];
  if (min === max) histogram = [{ from: min, to: max, count: n }];
  else {
    // In halves: bin k holds 2v − 2min in [k·span/10, (k+1)·span/10), i.e. k = ⌊10·(2v − 2min) / span⌋.
    const span = 2 * (max - min);
    const bin = (v: number) => Math.min(9, Math.floor((10 * (2 * v - 2 * min)) / span));
    const bound = (k: number) => (20 * min + k * span) / 20;
    histogram = Array.from({ length: 10 }, (_, k) => ({
      from: bound(k),
      to: k === 9 ? max : bound(k + 1),
      count: values.filter((v) => bin(v) === k).length,
    }));
  }
  return {
    ...base,
    min,
    max,
    mean: roundRational(sumOf(values.map((v) => 2 * v)), 2 * n, 4),
    median: medianOf(values),
    histogram,
  };
}

/**
 * A date question: min, max, the median (the earlier middle date of an even count), and counts per calendar
 * month from min's month to max's, or per calendar year when they lie in more than ten calendar years.
 */
export function startedStats(dates: string[]) {
  const n = dates.length;
  const base = { questionId: 'started', text: textOf('started'), type: 'date', answeredCount: n };
  if (n === 0) return { ...base, min: null, max: null, median: null, histogram: [] };
  const sorted = [...dates].sort();
  const min = sorted[0]!;
  const max = sorted[n - 1]!;
  const year = (d: string) => Number(d.slice(0, 4));
  const monthly = year(max) - year(min) < 10;
  const day = (y: number, m: number) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-01`;
  const histogram: { from: string; to: string; count: number }[] = [];
  let [y, mo] = [year(min), monthly ? Number(min.slice(5, 7)) : 1];
  while (day(y, mo) <= max) {
    const from = day(y, mo);
    if (monthly) [y, mo] = mo === 12 ? [y + 1, 1] : [y, mo + 1];
    else y += 1;
    const to = day(y, mo);
    histogram.push({ from, to, count: dates.filter((d) => d >= from && d < to).length });
  }
  return { ...base, min, max, median: sorted[Math.ceil(n / 2) - 1]!, histogram };
}

/** A single choice with "Other": a response choosing Other answered it, and is counted apart from the choices. */
export function whereStats(answers: string[]) {
  const n = answers.length;
  return {
    questionId: 'where',
    text: textOf('where'),
    type: 'single_choice',
    answeredCount: n,
    otherCount: answers.filter((a) => a === 'other').length,
    choices: WHERE_CHOICES.map((choice) => {
      const count = answers.filter((a) => a === choice.id).length;
      return { choiceId: choice.id, label: choice.label, count, percentage: percent(count, n) };
    }),
  };
}

const present = <T>(values: (T | null)[]) => values.filter((v): v is T => v !== null);

const questionsOf = (responses: MResponse[], halves: Halves = 'away') => [
  npsStats(
    responses.flatMap((r) => (r.nps === null ? [] : [r.nps])),
    halves,
  ),
  ratingStats(
    responses.flatMap((r) => (typeof r.rating === 'number' ? [r.rating] : [])),
    responses.filter((r) => r.rating === 'na').length,
  ),
  gridStats(responses.map((r) => r.grid)),
  oftenStats(responses.map((r) => r.often)),
  rankStats(present(responses.map((r) => r.rank))),
  hoursStats(present(responses.map((r) => r.hours))),
  startedStats(present(responses.map((r) => r.started))),
  whereStats(present(responses.map((r) => r.where))),
];

/**
 * Respondents: distinct respondent ids, each response without one counting as its own — but one whose respondent an
 * erasure of `identity` took still counts as that person. `split`: as its own (only to name a difference).
 */
export const respondentsOf = (responses: MResponse[], split = false) =>
  new Set(responses.map((r) => r.respondent ?? (split ? null : pseudonymOf(r)) ?? r.id)).size;

/** Who a response erased of its identity counts as: the same for one person's responses erased together. */
export const pseudonymOf = (r: MResponse) => (r.forgotten ? `${r.forgotten.respondent}@${r.forgotten.at}` : null);

// ---------------------------------------------------------------------------------------------------------------
// The anonymity rules

/** Group values: null last, else code-unit order. */
export const byValue = (a: Dept, b: Dept) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);

/**
 * Which groups are suppressed: those under the threshold; then, while the suppressed ones together hold fewer
 * respondents than the threshold (and some are suppressed), the smallest shown group too. Among equally small
 * groups the guard takes the first in `tieOrder`.
 */
export function suppressedValues(
  groups: { value: Dept; respondents: number }[],
  threshold: number,
  tieOrder: (a: Dept, b: Dept) => number = byValue,
): Set<Dept> {
  const suppressed = new Set<Dept>();
  let hidden = 0;
  for (const g of groups) {
    if (g.respondents < threshold) {
      suppressed.add(g.value);
      hidden += g.respondents;
    }
  }
  const shown = groups
    .filter((g) => !suppressed.has(g.value))
    .sort((a, b) => a.respondents - b.respondents || tieOrder(a.value, b.value));
  for (const g of shown) {
    if (suppressed.size === 0 || hidden >= threshold) break;
    suppressed.add(g.value);
    hidden += g.respondents;
  }
  return suppressed;
}

export interface StaticQuery {
  /** The window on `submittedAt`: from `submittedAfter` (inclusive) to `submittedBefore` (exclusive). */
  submittedAfter?: string;
  submittedBefore?: string;
  segmentBy?: 'department';
  distributionId?: string;
  filter?: DeptFilter;
}

/** An ISO 8601 UTC time as a number (the API writes milliseconds; a query may leave them out). */
const instant = (iso: string) => new Date(iso).getTime();

const inWindow = (r: MResponse, q: StaticQuery) =>
  (q.submittedAfter === undefined || instant(r.submittedAt) >= instant(q.submittedAfter)) &&
  (q.submittedBefore === undefined || instant(r.submittedAt) < instant(q.submittedBefore));

/** The responses a static analytics request covers. */
export function scopeOf(m: Model, survey: MSurvey, q: StaticQuery): MResponse[] {
  return live(m, survey).filter(
    (r) =>
      inWindow(r, q) &&
      (q.distributionId === undefined || r.distributionId === q.distributionId) &&
      (q.filter === undefined || (r.subject !== null && matches(q.filter, r.subject.department))),
  );
}

/** invitedCount and responseRate: recipients sent to (each person once), responders among them. */
function participation(m: Model, survey: MSurvey, q: StaticQuery): { invited: number; rate: number | null } | null {
  if (survey.distributions.length === 0) return null;
  const invited = new Set<string>();
  for (const d of survey.distributions) {
    if (q.distributionId !== undefined && d.id !== q.distributionId) continue;
    for (const r of d.recipients.values()) {
      if (r.status !== 'sent' && r.status !== 'responded') continue;
      if (q.filter !== undefined && !matches(q.filter, r.department)) continue;
      invited.add(r.externalId);
    }
  }
  // Responded: a response in the window (and to the distribution asked for), whatever the filter.
  const responses = live(m, survey).filter(
    (r) => inWindow(r, q) && (q.distributionId === undefined || r.distributionId === q.distributionId),
  );
  const responded = [...invited].filter((id) => responses.some((r) => r.respondent === id)).length;
  return { invited: invited.size, rate: invited.size === 0 ? null : roundRational(responded, invited.size, 3) };
}

function daily(responses: MResponse[]) {
  const days = new Map<string, number>();
  for (const r of responses) days.set(r.submittedAt.slice(0, 10), (days.get(r.submittedAt.slice(0, 10)) ?? 0) + 1);
  return [...days].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, count]) => ({ date, count }));
}

/**
 * The expected `StaticAnalytics`, without `generatedAt`. `variant` only serves to name a difference: another
 * order for ties of the subtraction guard, another rule for exact halves, responses erased of their identity
 * counted as respondents of their own.
 */
export function expectedStatic(
  m: Model,
  survey: MSurvey,
  q: StaticQuery,
  variant: { tieOrder?: (a: Dept, b: Dept) => number; halves?: Halves; split?: boolean } = {},
) {
  const tieOrder = variant.tieOrder ?? byValue;
  const halves = variant.halves ?? 'away';
  const count = (responses: MResponse[]) => respondentsOf(responses, variant.split);
  const scope = scopeOf(m, survey, q);
  const base = {
    surveyId: survey.id,
    submittedAfter: q.submittedAfter ?? null,
    submittedBefore: q.submittedBefore ?? null,
    distributionId: q.distributionId ?? null,
    segmentBy: q.segmentBy ?? null,
    anonymityThreshold: m.threshold,
  };
  if (count(scope) < m.threshold) {
    return {
      ...base,
      suppressed: true,
      suppressionReason: 'threshold',
      invitedCount: null,
      responseRate: null,
      responseCount: 0,
      questions: [],
      daily: [],
      segments: [],
    };
  }
  const invited = participation(m, survey, q);
  let segments: unknown[] = [];
  if (q.segmentBy) {
    const byGroup = new Map<Dept, MResponse[]>();
    for (const r of scope) {
      const value = r.subject?.department ?? null;
      byGroup.set(value, [...(byGroup.get(value) ?? []), r]);
    }
    const groups = [...byGroup].map(([value, responses]) => ({
      value,
      responses,
      respondents: count(responses),
    }));
    const hidden = suppressedValues(groups, m.threshold, tieOrder);
    const shown = groups
      .filter((g) => !hidden.has(g.value))
      .sort((a, b) => b.responses.length - a.responses.length || byValue(a.value, b.value));
    const suppressed = groups.filter((g) => hidden.has(g.value)).sort((a, b) => byValue(a.value, b.value));
    segments = [
      ...shown.map((g) => ({
        value: g.value,
        suppressed: false,
        suppressionReason: null,
        responseCount: g.responses.length,
        questions: questionsOf(g.responses, halves),
      })),
      ...suppressed.map((g) => ({
        value: g.value,
        suppressed: true,
        // Too small itself, or hidden by the subtraction guard.
        suppressionReason: g.respondents < m.threshold ? 'threshold' : 'complement',
        responseCount: null,
        questions: null,
      })),
    ];
  }
  return {
    ...base,
    suppressed: false,
    suppressionReason: null,
    invitedCount: invited?.invited ?? null,
    responseRate: invited?.rate ?? null,
    responseCount: scope.length,
    questions: questionsOf(scope, halves),
    daily: daily(scope),
    segments,
  };
}

/** The groups of a breakdown with their sizes, for messages. */
export function groupSizes(m: Model, survey: MSurvey, q: StaticQuery): string {
  const byGroup = new Map<Dept, MResponse[]>();
  for (const r of scopeOf(m, survey, q))
    byGroup.set(r.subject?.department ?? null, [...(byGroup.get(r.subject?.department ?? null) ?? []), r]);
  return [...byGroup].map(([v, rs]) => `${v ?? 'null'}=${respondentsOf(rs)}`).join(', ');
}

// ---------------------------------------------------------------------------------------------------------------
// Exports

export function exportRecord(r: MResponse) {
  return {
    id: r.id,
    surveyId: r.survey.id,
    respondentExternalId: r.respondent,
    distributionId: r.distributionId,
    // An export says N/A in so many words.
    answers: answersOf(r).map((a) => (a.value === null ? { ...a, notApplicable: true } : a)),
    submittedAt: r.submittedAt,
    // The model never changes a launched survey: every response answers its first version.
    surveyVersion: 1,
    // The model's surveys are in English alone: the answer page answers in it; the API says no language.
    language: r.channel === 'link' ? 'en' : null,
  };
}

const exportOrder = (a: MResponse, b: MResponse) =>
  a.submittedAt < b.submittedAt ? -1 : a.submittedAt > b.submittedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * The CSV header: the fixed columns, then one per question (its id), except one per row of a matrix and one per
 * choice of a ranking (`<question id>.<row or choice id>`), and "Other"'s text after its question (`where.other`).
 */
export const CSV_HEADER = [
  'responseId',
  'submittedAt',
  'respondentExternalId',
  'distributionId',
  'language',
  'nps',
  'rating',
  ...GRID_ROWS.map((row) => `grid.${row.id}`),
  ...OFTEN_ROWS.map((row) => `often.${row.id}`),
  ...RANK_CHOICES.map((choice) => `rank.${choice.id}`),
  'hours',
  'started',
  'where',
  'where.other',
];

const IDENTITY_COLUMN = CSV_HEADER.indexOf('respondentExternalId');

/** User text that a spreadsheet would evaluate as a formula gets a leading `'` in a CSV file. */
const escapeFormula = (text: string) => (/^'*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(text) ? `'${text}` : text);

/** A response's CSV row: N/A, like an unanswered question or row, is an empty cell; a ranked choice its place. */
export function csvRow(r: MResponse): string[] {
  const cell = (v: number | string | null | undefined) =>
    v === undefined || v === null || v === 'na' ? '' : String(v);
  const record = exportRecord(r);
  return [
    r.id,
    r.submittedAt,
    r.respondent ?? '',
    record.distributionId ?? '',
    record.language ?? '',
    cell(r.nps),
    cell(r.rating),
    ...GRID_ROWS.map((row) => cell(r.grid?.[row.id])),
    ...OFTEN_ROWS.map((row) => cell(r.often?.[row.id])),
    ...RANK_CHOICES.map((choice) => (r.rank === null ? '' : String(r.rank.indexOf(choice.id) + 1))),
    cell(r.hours),
    cell(r.started),
    cell(r.where),
    r.other === null ? '' : escapeFormula(r.other),
  ];
}

/**
 * What an export requested at model time `at` holds: every response acknowledged before and not deleted (a full
 * export), or only those acknowledged after `base` was requested (an increment); and the deletions it lists. The
 * records as the JSON formats write them, and the rows of the CSV format (its header first).
 */
export function expectedExport(m: Model, survey: MSurvey, at: number, base: MExport | null) {
  const all = m.responses.filter((r) => r.survey === survey);
  const responses = all
    .filter((r) => r.acked < at && (r.deleted === null || r.deleted > at) && (base === null || r.acked > base.at))
    .sort(exportOrder);
  const deletions = all
    .filter((r) => r.deleted !== null && r.deleted < at && (base === null || r.deleted > base.at))
    .map((r) => r.id)
    .sort();
  // An anonymous survey's file has no identity column (only an identified survey's has one).
  const identity = (row: string[]) => (survey.anonymous ? row.filter((_, i) => i !== IDENTITY_COLUMN) : row);
  return {
    records: responses.map(exportRecord),
    csv: [CSV_HEADER, ...responses.map(csvRow)].map(identity),
    deletions,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Privacy requests

/** What the service holds about the person a request names, found before anything changes. */
export interface MHoldings {
  /** The person: the externalId named, or every respondent whose record or recipient rows have the address. */
  ids: string[];
  /** Their addresses (the one named, their records' and recipient rows'), which find earlier access files. */
  emails: string[];
  records: MPerson[];
  /** Their live responses (identified surveys), oldest first. */
  responses: MResponse[];
  /** Anonymous surveys with invitations of theirs marked `responded`: how many. */
  notIdentifiable: { survey: MSurvey; responses: number }[];
  recipients: { distribution: MDistribution; recipient: MRecipient }[];
  events: MEvent[];
  exports: MExport[];
  accessFiles: MAccess[];
}

const recipientRows = (m: Model, accept: (r: MRecipient) => boolean) =>
  m.surveys.flatMap((survey) =>
    survey.distributions.flatMap((distribution) =>
      [...distribution.recipients.values()].filter(accept).map((recipient) => ({ distribution, recipient })),
    ),
  );

const bySurveyId = (a: MSurvey, b: MSurvey) => a.id.localeCompare(b.id);

/** Whether export `e` holds response `r`: acknowledged in its scope and not deleted before it. */
const holds = (e: MExport, r: MResponse) =>
  r.acked < e.at && (e.base === null || r.acked > e.base.at) && (r.deleted === null || r.deleted > e.at);

/** The respondent a response had when export time `at` wrote it. */
const respondentAt = (r: MResponse, at: number) =>
  r.forgotten === null ? r.respondent : r.forgotten.at < at ? null : r.forgotten.respondent;

/**
 * `liveExports`: count only the export files that hold one of their responses that is still live (only to name a
 * difference: the model counts every file that holds a response of theirs, deleted since or not, as every such
 * file shows them).
 */
export function holdingsOf(m: Model, subject: MSubject, variant: { liveExports?: boolean } = {}): MHoldings {
  const address = subject.value.toLowerCase();
  const ids =
    subject.kind === 'externalId'
      ? [subject.value]
      : m.people
          .filter(
            (p) =>
              p.email.toLowerCase() === address &&
              (p.record !== null || recipientRows(m, (r) => r.externalId === p.externalId).length > 0),
          )
          .map((p) => p.externalId);
  const records = m.people.filter((p) => ids.includes(p.externalId) && p.record !== null);
  const recipients = recipientRows(m, (r) => ids.includes(r.externalId));
  const emails = new Set(subject.kind === 'email' ? [address] : []);
  for (const p of records) emails.add(p.email.toLowerCase());
  for (const { recipient } of recipients) emails.add(recipient.email.toLowerCase());
  const responses = m.responses
    .filter((r) => r.deleted === null && r.respondent !== null && ids.includes(r.respondent))
    .sort((a, b) =>
      a.submittedAt < b.submittedAt ? -1 : a.submittedAt > b.submittedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
    );
  const found = new Set(responses.map((r) => r.id));
  const notIdentifiable = m.surveys
    .filter((s) => s.anonymous)
    .map((survey) => ({
      survey,
      responses: recipients.filter((x) => x.distribution.survey === survey && x.recipient.status === 'responded')
        .length,
    }))
    .filter((x) => x.responses > 0);
  return {
    ids,
    emails: [...emails],
    records,
    responses,
    notIdentifiable,
    recipients,
    events: m.events.filter((e) => found.has(e.responseId) || (e.respondent !== null && ids.includes(e.respondent))),
    // A file holds them if it holds a response naming them (one deleted since too: the file still shows them).
    exports: m.surveys.flatMap((s) =>
      s.exports.filter(
        (e) =>
          !e.erased &&
          (variant.liveExports ? responses : m.responses).some((r) => {
            const respondent = respondentAt(r, e.at);
            return r.survey === s && holds(e, r) && respondent !== null && ids.includes(respondent);
          }),
      ),
    ),
    accessFiles: m.accessFiles.filter(
      (a) =>
        !a.erased &&
        (a.subject.kind === 'externalId' ? ids.includes(a.subject.value) : emails.has(a.subject.value.toLowerCase())),
    ),
  };
}

/** The request's `inventory`: the same for access and erasure, dry run and real run. */
export function inventoryOf(h: MHoldings) {
  const found = new Map<MSurvey, number>();
  for (const r of h.responses) found.set(r.survey, (found.get(r.survey) ?? 0) + 1);
  return {
    respondents: h.records.length,
    // Every respondent is a SCIM user.
    scimUsers: h.records.length,
    responses: [
      ...[...found].map(([survey, responses]) => ({ survey, responses, status: 'found' })),
      ...h.notIdentifiable.map((x) => ({ ...x, status: 'not_identifiable' })),
    ]
      .sort((a, b) => bySurveyId(a.survey, b.survey))
      .map((x) => ({
        surveyId: x.survey.id,
        privacy: x.survey.anonymous ? 'anonymous' : 'identified',
        responses: x.responses,
        status: x.status,
      })),
    distributionRecipients: h.recipients.length,
    personalLinks: h.recipients.length,
    kioskCodes: 0,
    events: h.events.length,
    // The model has no webhooks, AI analyses, sync errors or unsubscriptions.
    webhookDeliveries: 0,
    exportFiles: h.exports.length,
    aiAnalyses: 0,
    analyticsCopies: h.responses.length,
    accessFiles: h.accessFiles.length,
    syncJobs: 0,
    unsubscribes: 0,
  };
}

/** A real erasure: what it does to each copy (the reference's table), at model time `at`. */
export function applyErasure(m: Model, h: MHoldings, scope: 'identity' | 'identity_and_responses', at: number) {
  for (const e of h.exports) e.erased = true;
  for (const a of h.accessFiles) a.erased = true;
  for (const r of h.responses) {
    if (scope === 'identity_and_responses') r.deleted = at;
    else {
      r.forgotten = { respondent: r.respondent!, at };
      r.respondent = null;
    }
  }
  for (const { distribution, recipient } of h.recipients) distribution.recipients.delete(recipient.externalId);
  const held = new Set(h.events);
  if (scope === 'identity_and_responses') m.events = m.events.filter((e) => !held.has(e));
  else for (const e of held) e.respondent = null;
  for (const p of h.records) p.record = null;
}

const surveyTitle = (s: MSurvey) => `Pulse ${s.index}`;

/** A choice question's labels of the choices an answer names (none for "Other" alone). */
function labelsOf(questionId: string, value: unknown): string[] | undefined {
  const question = QUESTIONS.find((q) => q.id === questionId)!;
  if (!('choices' in question)) return undefined;
  const labels = new Map<string, string>(question.choices.map((c) => [c.id, c.label]));
  const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? (value as string[]) : [];
  const named = ids.filter((id) => labels.has(id));
  return named.length > 0 ? named.map((id) => labels.get(id)!) : undefined;
}

/**
 * The access file, without `requestId` and `generatedAt`: the person's records, their responses with the questions'
 * texts, the anonymous surveys they answered, their recipient rows (by distribution id) without links.
 */
export function expectedAccessFile(h: MHoldings) {
  return {
    respondents: h.records.map((p) => ({ externalId: p.externalId, email: p.email, department: p.record!.department })),
    scimUsers: h.records.map((p) => p.externalId),
    responses: h.responses.map((r) => ({
      responseId: r.id,
      surveyId: r.survey.id,
      surveyTitle: surveyTitle(r.survey),
      privacy: 'identified',
      submittedAt: r.submittedAt,
      surveyVersion: 1,
      language: r.channel === 'link' ? 'en' : null,
      distributionId: r.distributionId,
      answers: answersOf(r).map((a) => {
        const question = QUESTIONS.find((q) => q.id === a.questionId)!;
        const labels = labelsOf(a.questionId, a.value);
        return {
          questionId: a.questionId,
          questionText: question.text,
          type: question.type,
          value: a.value,
          ...(a.other === undefined ? {} : { other: a.other }),
          ...(labels ? { labels } : {}),
        };
      }),
    })),
    notIdentifiable: [...h.notIdentifiable]
      .sort((a, b) => bySurveyId(a.survey, b.survey))
      .map((x) => ({ surveyId: x.survey.id, surveyTitle: surveyTitle(x.survey), responses: x.responses })),
    distributions: h.recipients
      .map(({ distribution, recipient }) => ({
        distributionId: distribution.id,
        surveyId: distribution.survey.id,
        method: distribution.method,
        status: recipient.status,
        respondedAt: recipient.status === 'responded' && !distribution.survey.anonymous,
        personalLink: true,
        kioskCode: false,
        snapshot: { email: recipient.email, department: recipient.department },
      }))
      .sort((a, b) => (a.distributionId < b.distributionId ? -1 : 1)),
    unsubscribes: [],
    webhookRecipients: [],
  };
}
