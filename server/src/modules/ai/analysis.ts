/**
 * Turns a survey's responses and a provider's findings into the contract's result, the same way for every
 * provider: statistics of the scored questions, sentiment per comment → per response → per question and
 * overall, themes with their response ids and share, quotes checked to be verbatim, the anonymity rule, the
 * summary and the recommendations. Pure, so every rule is tested without a database.
 *
 * Personal data (redact.ts): the comments are redacted here, before any provider reads them, and every text of
 * the result that a provider wrote or that quotes an answer is redacted again here — the same redactor, for
 * every provider. Question texts are the survey's own and are shown as the survey shows them.
 */
import type {
  AiAnalysisSentiment as Sentiment,
  AiAnalysisTheme as Theme,
  AiRecommendation as Recommendation,
  Answer,
  Question,
} from '../../generated/openapi.js';
import { labelOf } from './nlp.js';
import type { AnalysisInput, AnalysisQuestion, TextFindings } from './provider.js';
import { hasRedaction, quotable, redactor, type Redactor } from './redact.js';
import type { AnalysisResult } from './tables.js';

/** Fewer comments than this: no summary (besides the anonymity threshold). */
export const MIN_COMMENTS_FOR_SUMMARY = 5;
const MAX_THEMES = 20;
const MAX_RECOMMENDATIONS = 10;

export interface ResponseText {
  id: string;
  answers: Answer[];
}

/** What the provider reads, and where each comment came from (kept here: the provider never sees ids). */
export interface PreparedInput {
  /** The comments in it are redacted. */
  input: AnalysisInput;
  /** For each comment, the index of its response in `responses`. */
  commentResponse: number[];
  /** The redactor of this analysis (its respondents' names), applied to the comments and to the result. */
  redact: Redactor;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Every text an analysis may read or pass on — the answers, the title, the question texts and the focus — so
 * that the respondents' names among them can be looked up (`nameCandidates`) before `prepareInput`.
 */
export function textsOf(
  survey: { title: string; questions: Question[] },
  responses: readonly ResponseText[],
  options: { focus?: string },
): string[] {
  const texts = [survey.title, ...survey.questions.map((q) => q.text)];
  if (options.focus) texts.push(options.focus);
  for (const response of responses)
    for (const answer of response.answers) if (typeof answer.value === 'string') texts.push(answer.value);
  return texts;
}

/**
 * `respondentNames`: the names (or name parts) of the organization's respondents that occur in the texts; with
 * none, e-mail addresses, URLs and phone numbers are still redacted.
 */
export function prepareInput(
  survey: { title: string; questions: Question[] },
  responses: readonly ResponseText[],
  options: { questionIds?: string[]; focus?: string; respondentNames?: string[] },
): PreparedInput {
  const redact = redactor(options.respondentNames ?? []);
  const wanted = options.questionIds ? new Set(options.questionIds) : undefined;
  const questions = survey.questions.filter((q) => !wanted || wanted.has(q.id));
  const byId = new Map(questions.map((q) => [q.id, q]));
  const sums = new Map<string, { total: number; count: number }>();
  const comments: AnalysisInput['comments'] = [];
  const commentResponse: number[] = [];
  responses.forEach((response, r) => {
    for (const answer of response.answers) {
      const question = byId.get(answer.questionId);
      if (!question) continue;
      const s = sums.get(question.id) ?? { total: 0, count: 0 };
      const scored = question.type === 'nps' || question.type === 'rating';
      // N/A (null) is no score: it stays out of the average, as in analytics.
      if (scored && typeof answer.value !== 'number') continue;
      if (scored) s.total += answer.value as number;
      // The text of an "Other" choice is a comment too, tied to its question.
      if (typeof answer.other === 'string' && answer.other.trim().length > 0) {
        comments.push({ questionId: question.id, text: redact(answer.other) });
        commentResponse.push(r);
      }
      if (question.type === 'text' && typeof answer.value === 'string') {
        if (answer.value.trim().length === 0) continue;
        comments.push({ questionId: question.id, text: redact(answer.value) });
        commentResponse.push(r);
      }
      s.count += 1;
      sums.set(question.id, s);
    }
  });
  const analysed: AnalysisQuestion[] = questions.map((q) => {
    const s = sums.get(q.id) ?? { total: 0, count: 0 };
    let averageScore: number | null = null;
    let normalizedScore: number | null = null;
    if ((q.type === 'nps' || q.type === 'rating') && s.count > 0) {
      const [min, max] = q.type === 'nps' ? [0, 10] : [q.min, q.max];
      averageScore = round(s.total / s.count, 2);
      normalizedScore = round((s.total / s.count - min) / (max - min));
    }
    return { id: q.id, type: q.type, text: q.text, averageScore, normalizedScore, answerCount: s.count };
  });
  return {
    input: {
      surveyTitle: survey.title,
      ...(options.focus ? { focus: options.focus } : {}),
      questions: analysed,
      comments,
      respondentNames: options.respondentNames ?? [],
    },
    commentResponse,
    redact,
  };
}

function distribution(scores: readonly number[]): Sentiment | null {
  if (scores.length === 0) return null;
  let positive = 0;
  let negative = 0;
  let total = 0;
  for (const s of scores) {
    total += s;
    const label = labelOf(s);
    if (label === 'positive') positive++;
    else if (label === 'negative') negative++;
  }
  const n = scores.length;
  const p = round(positive / n);
  const neg = round(negative / n);
  return {
    positive: p,
    negative: neg,
    neutral: round(Math.max(0, 1 - p - neg)),
    score: round(Math.max(-1, Math.min(1, total / n))),
  };
}

/** A BCP 47-shaped tag that carries nothing redactable, or null. */
function languageOf(tag: string | null, redact: Redactor): string | null {
  if (tag === null) return null;
  return /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/.test(tag) && tag.length <= 35 && redact(tag) === tag ? tag : null;
}

/** Keywords as shown: lower case, and none that held personal data (a redacted keyword describes nothing). */
function keywordsOf(keywords: readonly string[], redact: Redactor): string[] {
  const out: string[] = [];
  for (const keyword of keywords) {
    const shown = keyword.toLowerCase().slice(0, 100);
    if (
      redact(keyword) !== keyword ||
      redact(shown) !== shown ||
      hasRedaction(shown) ||
      shown.trim() === '' ||
      out.includes(shown)
    )
      continue;
    out.push(shown);
  }
  return out.slice(0, 10);
}

/** Keeps only the comments the provider analysed (renumbered), when it did not analyse all. */
function onlyAnalysed(
  prepared: PreparedInput,
  findings: TextFindings,
): { prepared: PreparedInput; findings: TextFindings } {
  if (!findings.analysedComments) return { prepared, findings };
  const kept = [...new Set(findings.analysedComments)]
    .filter((i) => i >= 0 && i < prepared.input.comments.length)
    .sort((a, b) => a - b);
  const position = new Map(kept.map((old, now) => [old, now]));
  return {
    prepared: {
      ...prepared,
      input: { ...prepared.input, comments: kept.map((i) => prepared.input.comments[i]!) },
      commentResponse: kept.map((i) => prepared.commentResponse[i]!),
    },
    findings: {
      ...findings,
      analysedComments: undefined,
      sentiments: kept.map((i) => findings.sentiments[i] ?? 0),
      themes: findings.themes.map((t) => ({
        ...t,
        comments: t.comments.flatMap((i) => (position.has(i) ? [position.get(i)!] : [])),
      })),
    },
  };
}

const describeSentiment = (score: number) =>
  score > 0.25
    ? 'positive'
    : score > 0.05
      ? 'mildly positive'
      : score < -0.25
        ? 'negative'
        : score < -0.05
          ? 'mildly negative'
          : 'neutral';

export function assemble(
  full: PreparedInput,
  responses: readonly ResponseText[],
  findings: TextFindings,
  threshold: number,
): AnalysisResult {
  const { prepared, findings: kept } = onlyAnalysed(full, findings);
  findings = kept;
  const { input, commentResponse, redact } = prepared;
  const texts = input.comments.map((c) => c.text);
  const sentiments = input.comments.map((_, i) => Math.max(-1, Math.min(1, findings.sentiments[i] ?? 0)));

  // Per response: the mean of its comments.
  const perResponse = new Map<number, number[]>();
  commentResponse.forEach((r, i) => {
    const scores = perResponse.get(r);
    if (scores) scores.push(sentiments[i]!);
    else perResponse.set(r, [sentiments[i]!]);
  });
  const respondedWithText = perResponse.size;
  const suppressed = respondedWithText < threshold;

  let suppressedQuestions = 0;
  const questions = input.questions.map((q) => {
    const scores = input.comments.flatMap((c, i) => (c.questionId === q.id ? [sentiments[i]!] : []));
    const hidden = q.type === 'text' && scores.length > 0 && scores.length < threshold;
    if (hidden) suppressedQuestions++;
    return {
      questionId: q.id,
      type: q.type,
      text: q.text,
      answerCount: q.answerCount,
      sentiment: q.type === 'text' && !hidden ? distribution(scores) : null,
      averageScore: q.averageScore,
      normalizedScore: q.normalizedScore,
      suppressed: hidden,
    };
  });

  let suppressedThemes = 0;
  const themes: Array<Theme & { recommendation?: string }> = [];
  if (!suppressed) {
    for (const found of findings.themes) {
      const members = [...new Set(found.comments.filter((i) => Number.isInteger(i) && i >= 0 && i < texts.length))];
      const responseIndexes = [...new Set(members.map((i) => commentResponse[i]!))].sort((a, b) => a - b);
      if (responseIndexes.length === 0) continue;
      if (responseIndexes.length < threshold) {
        suppressedThemes++;
        continue;
      }
      const memberTexts = members.map((i) => texts[i]!);
      // Quoted from the redacted answers only (the texts the provider was given), redacted once more.
      const quotes = quotable(found.quotes, memberTexts.length > 0 ? memberTexts : texts, redact);
      const mean = members.reduce((sum, i) => sum + sentiments[i]!, 0) / members.length;
      // Redacted before lower-casing, so that a capitalised name that is also a word ("Will") is still caught.
      const name = redact(found.name).toLowerCase().trim().slice(0, 100);
      themes.push({
        name: name || 'other',
        mentions: responseIndexes.length,
        share: round(responseIndexes.length / respondedWithText),
        sentiment: round(mean),
        keywords: keywordsOf(found.keywords, redact),
        responseIds: responseIndexes.map((r) => responses[r]!.id),
        sampleQuotes: quotes.slice(0, 3),
        ...(found.recommendation ? { recommendation: redact(found.recommendation).slice(0, 1000) } : {}),
      });
    }
  }
  themes.sort((a, b) => b.mentions - a.mentions || (a.name < b.name ? -1 : 1));
  const shown = themes.slice(0, MAX_THEMES);

  const actions = recommendationsFor(shown, questions, threshold);
  const overall = distribution(sentiments);
  const commentCount = texts.length;
  // A provider's summary can echo anything; the offline one echoes the focus. Both are redacted.
  const summary =
    suppressed || commentCount < MIN_COMMENTS_FOR_SUMMARY
      ? null
      : redact(
          findings.summary?.trim() ||
            offlineSummary(input, overall!, shown, questions, commentCount, respondedWithText),
        ).slice(0, 5000);

  return {
    commentCount,
    language: commentCount === 0 ? null : languageOf(findings.language, redact),
    summary,
    sentiment: overall,
    questions,
    responseSentiments: suppressed
      ? []
      : [...perResponse]
          .sort((a, b) => a[0] - b[0])
          .map(([r, scores]) => {
            const score = round(scores.reduce((x, y) => x + y, 0) / scores.length);
            return { responseId: responses[r]!.id, score, label: labelOf(score) };
          }),
    themes: shown.map(({ recommendation: _r, ...theme }) => theme),
    recommendations: actions.map((a) => a.text),
    actions,
    anonymity: { threshold, suppressed, suppressedThemes, suppressedQuestions },
  };
}

type QuestionResult = AnalysisResult['questions'][number];

/**
 * Theme recommendations (negative themes first, by size; positive ones last, to keep) and the lowest-scoring
 * questions (below 60 % of their scale, answered by at least `threshold` people).
 */
function recommendationsFor(
  themes: ReadonlyArray<Theme & { recommendation?: string }>,
  questions: readonly QuestionResult[],
  threshold: number,
): Recommendation[] {
  const out: Array<Recommendation & { weight: number }> = [];
  for (const theme of themes) {
    const negative = theme.sentiment < -0.05;
    const text =
      theme.recommendation ??
      (negative
        ? `Look into "${theme.name}": ${theme.mentions} responses raise it, mostly negatively.`
        : `Keep and build on "${theme.name}", which ${theme.mentions} responses mention${theme.sentiment > 0.05 ? ' positively' : ''}.`);
    const priority = negative ? (theme.share >= 0.2 || theme.sentiment < -0.3 ? 'high' : 'medium') : 'low';
    out.push({
      text,
      priority,
      basis: 'theme',
      theme: theme.name,
      questionId: null,
      weight: (negative ? 2 : 0) + theme.share,
    });
  }
  const scored = questions
    .filter((q) => q.normalizedScore !== null && q.normalizedScore < 0.6 && q.answerCount >= threshold)
    .sort((a, b) => a.normalizedScore! - b.normalizedScore!)
    .slice(0, 3);
  for (const q of scored) {
    const scaleMax = q.type === 'nps' ? 10 : undefined;
    const where = scaleMax
      ? `${q.averageScore} of ${scaleMax}`
      : `${Math.round(q.normalizedScore! * 100)} % of its scale, average ${q.averageScore}`;
    const priority = q.normalizedScore! < 1 / 3 ? 'high' : 'medium';
    out.push({
      text: `Find out what lowers "${q.text.slice(0, 300)}" (${where}) and act on it; it is among the lowest-scoring questions.`,
      priority,
      basis: 'question',
      theme: null,
      questionId: q.questionId,
      weight: (priority === 'high' ? 2.5 : 1.5) + (1 - q.normalizedScore!),
    });
  }
  const order = { high: 0, medium: 1, low: 2 };
  return out
    .sort((a, b) => order[a.priority] - order[b.priority] || b.weight - a.weight)
    .slice(0, MAX_RECOMMENDATIONS)
    .map(({ weight: _w, ...r }) => r);
}

function offlineSummary(
  input: AnalysisInput,
  overall: Sentiment,
  themes: readonly Theme[],
  questions: readonly QuestionResult[],
  commentCount: number,
  responses: number,
): string {
  const parts: string[] = [];
  parts.push(
    `${commentCount} comments from ${responses} responses; overall sentiment is ${describeSentiment(overall.score)} (score ${overall.score}; ${Math.round(overall.positive * 100)} % positive, ${Math.round(overall.negative * 100)} % negative).`,
  );
  if (themes.length > 0) {
    const top = themes.slice(0, 3).map((t) => `${t.name} (${t.mentions} responses, ${describeSentiment(t.sentiment)})`);
    parts.push(`The most discussed themes are ${top.join(', ')}.`);
    const worst = [...themes].sort((a, b) => a.sentiment - b.sentiment)[0]!;
    const best = [...themes].sort((a, b) => b.sentiment - a.sentiment)[0]!;
    if (worst.sentiment < -0.05) parts.push(`The most negative theme is ${worst.name}.`);
    if (best.sentiment > 0.05 && best.name !== worst.name) parts.push(`The most positive theme is ${best.name}.`);
  }
  if (input.focus) {
    const focus = input.focus.toLowerCase();
    const related = themes.filter((t) => t.keywords.some((k) => focus.includes(k)) || focus.includes(t.name));
    parts.push(
      related.length > 0
        ? `On the focus "${input.focus.slice(0, 200)}": see ${related.map((t) => t.name).join(', ')}.`
        : `No theme matches the focus "${input.focus.slice(0, 200)}" directly.`,
    );
  }
  const lowest = questions
    .filter((q) => q.normalizedScore !== null)
    .sort((a, b) => a.normalizedScore! - b.normalizedScore!)[0];
  if (lowest)
    parts.push(`The lowest-scoring question is "${lowest.text.slice(0, 200)}" (average ${lowest.averageScore}).`);
  return parts.join(' ').slice(0, 5000);
}
