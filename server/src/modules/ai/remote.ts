/**
 * The OpenAI-compatible provider (OpenAI, vLLM, Ollama, LM Studio…): `POST {AI_BASE_URL}/chat/completions`
 * with JSON-schema structured output (`response_format: { type: "json_schema" }`), temperature 0. Each call is
 * bounded by `AI_TIMEOUT_MS`. Output that does not parse or does not match the schema is sent back once with
 * the problems found ("repair"); still invalid, the call fails with `ai_output_invalid`.
 *
 * Privacy: everything sent goes through the redactor (e-mails, phones, URLs, respondents' names) — the
 * comments arrive redacted (analysis.ts), and the survey's title, question texts and focus are redacted here
 * with the same names; comments are numbered for the call, never identified by response or respondent id.
 * What the model answers is redacted again when the result is assembled, like any provider's.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { AiConfig } from '../../config.js';
import type { DisplayRule, QuestionInput } from '../../generated/openapi.js';
import { fixDraft, type DraftAdjustment } from './draft-fixes.js';
import type {
  AiProvider,
  AnalysisInput,
  DraftCheck,
  FoundTheme,
  GeneratedDraft,
  GenerateRequest,
  SurveyDraft,
  TextFindings,
} from './provider.js';
import { ProviderError } from './provider.js';
import { redactor } from './redact.js';

/** What a remote analysis may send: the newest comments first, within these bounds. */
export const REMOTE_LIMITS = { maxComments: 400, maxCommentChars: 1000, maxTotalChars: 80_000 };

const ajv = new Ajv2020({ strict: false, allErrors: true });

const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });

const DISPLAY_OPS = ['equals', 'notEquals', 'in', 'gte', 'lte', 'answered', 'notAnswered'] as const;

/**
 * A flat question shape every structured-output implementation accepts (no oneOf; every field present, null or empty
 * where it does not apply); mapped to the contract's after. The newer parts (rows, options, logic, keys) are loosely
 * typed here on purpose: the contract's validation judges them after, and a bad one is dropped (draft-fixes.ts)
 * rather than failing the whole answer.
 */
const generatedSurveySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'description', 'questions'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    questions: {
      type: 'array',
      minItems: 1,
      maxItems: 30,
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'type',
          'text',
          'required',
          'min',
          'max',
          'minLabel',
          'maxLabel',
          'choices',
          'rows',
          'minDate',
          'maxDate',
          'integer',
          'allowOther',
          'allowNotApplicable',
          'key',
          'displayIf',
        ],
        properties: {
          type: {
            type: 'string',
            enum: ['nps', 'rating', 'single_choice', 'multiple_choice', 'text', 'matrix', 'ranking', 'number', 'date'],
          },
          text: { type: 'string', minLength: 1, maxLength: 500 },
          required: { type: 'boolean' },
          min: nullable({ type: 'integer' }),
          max: nullable({ type: 'integer' }),
          minLabel: nullable({ type: 'string', maxLength: 100 }),
          maxLabel: nullable({ type: 'string', maxLength: 100 }),
          choices: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 200 } },
          rows: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 1000 } },
          minDate: nullable({ type: 'string', maxLength: 20 }),
          maxDate: nullable({ type: 'string', maxLength: 20 }),
          integer: { type: 'boolean' },
          allowOther: { type: 'boolean' },
          allowNotApplicable: { type: 'boolean' },
          key: nullable({ type: 'string', maxLength: 200 }),
          displayIf: nullable({
            type: 'object',
            additionalProperties: false,
            required: ['combine', 'rules'],
            properties: {
              combine: { type: 'string', enum: ['all', 'any'] },
              rules: {
                type: 'array',
                maxItems: 50,
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['question', 'op', 'value'],
                  properties: {
                    question: { type: 'integer', description: 'The number of an earlier question, from 1.' },
                    op: { type: 'string', enum: DISPLAY_OPS },
                    value: {
                      anyOf: [
                        { type: 'number' },
                        { type: 'string', maxLength: 200 },
                        {
                          type: 'array',
                          maxItems: 50,
                          items: { anyOf: [{ type: 'number' }, { type: 'string', maxLength: 200 }] },
                        },
                        { type: 'null' },
                      ],
                    },
                  },
                },
              },
            },
          }),
        },
      },
    },
  },
} as const;

const analysisSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['language', 'sentiments', 'themes', 'summary'],
  properties: {
    language: { type: 'string', maxLength: 35 },
    sentiments: {
      type: 'array',
      description: 'One entry per comment number.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['comment', 'score'],
        properties: { comment: { type: 'integer', minimum: 1 }, score: { type: 'number', minimum: -1, maximum: 1 } },
      },
    },
    themes: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'keywords', 'comments', 'quotes', 'recommendation'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 100 },
          keywords: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 100 } },
          comments: { type: 'array', items: { type: 'integer', minimum: 1 } },
          quotes: { type: 'array', maxItems: 3, items: { type: 'string', maxLength: 500 } },
          recommendation: { type: 'string', maxLength: 1000 },
        },
      },
    },
    summary: { type: 'string', maxLength: 5000 },
  },
} as const;

/** The fields of the newer question types: a model that leaves them out (no strict output) means none of them. */
const NEWER_FIELDS = ['rows', 'minDate', 'maxDate', 'integer', 'allowOther', 'allowNotApplicable', 'key', 'displayIf'];
const questionSchema = generatedSurveySchema.properties.questions.items;
const validateGenerated: ValidateFunction = ajv.compile({
  ...generatedSurveySchema,
  properties: {
    ...generatedSurveySchema.properties,
    questions: {
      ...generatedSurveySchema.properties.questions,
      items: { ...questionSchema, required: questionSchema.required.filter((name) => !NEWER_FIELDS.includes(name)) },
    },
  },
});
const validateAnalysis: ValidateFunction = ajv.compile(analysisSchema);

type RuleValue = number | string | Array<number | string> | null;

interface GeneratedQuestion {
  type: QuestionInput['type'];
  text: string;
  required: boolean;
  min: number | null;
  max: number | null;
  minLabel: string | null;
  maxLabel: string | null;
  choices: string[];
  // Absent from a model that answers without the strict schema (NEWER_FIELDS): none.
  rows?: string[];
  minDate?: string | null;
  maxDate?: string | null;
  integer?: boolean;
  allowOther?: boolean;
  allowNotApplicable?: boolean;
  key?: string | null;
  displayIf?: {
    combine: 'all' | 'any';
    rules: Array<{ question: number; op: (typeof DISPLAY_OPS)[number]; value: RuleValue }>;
  } | null;
}

interface GeneratedSurvey {
  title: string;
  description: string;
  questions: GeneratedQuestion[];
}

interface RemoteAnalysis {
  language: string;
  sentiments: Array<{ comment: number; score: number }>;
  themes: Array<{ name: string; keywords: string[]; comments: number[]; quotes: string[]; recommendation: string }>;
  summary: string;
}

const describe = (errors: readonly ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
    .join('; ');

/** Seconds or an HTTP date, as `Retry-After` allows; capped at a minute. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.max(0, Math.min(60_000, ms)) : undefined;
}

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

export class OpenAiCompatibleProvider implements AiProvider {
  readonly name = 'openai-compatible' as const;
  readonly model: string;
  readonly generationModel: string;

  constructor(private readonly config: AiConfig) {
    this.model = config.model ?? 'unknown';
    this.generationModel = this.model;
  }

  /** One chat completion; the content of the first choice. `deadline`: the whole operation's end (generateSurvey). */
  private async complete(messages: Message[], schemaName: string, schema: object, deadline?: number): Promise<string> {
    const timeoutMs =
      deadline === undefined
        ? this.config.timeoutMs
        : Math.max(1, Math.min(this.config.timeoutMs, deadline - Date.now()));
    const url = `${this.config.baseUrl!.replace(/\/+$/, '')}/chat/completions`;
    let response: Response | undefined;
    let text: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: this.model,
          temperature: 0,
          messages,
          response_format: { type: 'json_schema', json_schema: { name: schemaName, strict: true, schema } },
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      // The timeout's signal covers the body too: a provider that stalls mid-answer times out here.
      text = await response.text();
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new ProviderError(
          'ai_provider_timeout',
          `The AI provider did not answer within ${this.config.timeoutMs} ms.`,
          true,
        );
      // With a response, the provider was reached and hung up while sending its body.
      const what = response ? 'closed the connection' : 'could not be reached';
      throw new ProviderError('ai_provider_unavailable', `The AI provider ${what}.`, true);
    }
    if (response.status === 429)
      throw new ProviderError(
        'ai_provider_unavailable',
        'The AI provider is rate-limiting requests (429).',
        true,
        retryAfterMs(response.headers.get('retry-after')),
      );
    if (response.status >= 500)
      throw new ProviderError(
        'ai_provider_unavailable',
        `The AI provider failed (${response.status}).`,
        true,
        retryAfterMs(response.headers.get('retry-after')),
      );
    if (response.status >= 400)
      throw new ProviderError(
        'ai_provider_unavailable',
        `The AI provider refused the request (${response.status}); check AI_BASE_URL, AI_API_KEY and AI_MODEL.`,
        false,
      );
    let content: unknown;
    try {
      content = (JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message
        ?.content;
    } catch {
      throw new ProviderError(
        'ai_output_invalid',
        'The AI provider answered with something other than a chat completion.',
        true,
      );
    }
    if (typeof content !== 'string')
      throw new ProviderError('ai_output_invalid', 'The AI provider answered without message content.', true);
    return content;
  }

  /**
   * Asks, parses and validates; on invalid output asks once more with the problems (the repair). `check` adds
   * checks beyond the schema.
   */
  private async structured<T>(
    messages: Message[],
    schemaName: string,
    schema: object,
    validate: ValidateFunction,
    check: (value: T) => string[] = () => [],
    deadline?: number,
  ): Promise<T> {
    let conversation = messages;
    let problems = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      const content = await this.complete(conversation, schemaName, schema, deadline);
      let value: unknown;
      try {
        value = JSON.parse(content);
        if (!validate(value)) problems = describe(validate.errors);
        else {
          const extra = check(value as T);
          if (extra.length === 0) return value as T;
          problems = extra.slice(0, 10).join('; ');
        }
      } catch {
        problems = 'the answer is not valid JSON';
      }
      conversation = [
        ...messages,
        { role: 'assistant', content: content.slice(0, 20_000) },
        {
          role: 'user',
          content: `That answer is invalid: ${problems.slice(0, 2000)}. Answer again with only a JSON object that matches the schema.`,
        },
      ];
    }
    throw new ProviderError(
      'ai_output_invalid',
      `The AI provider's output stayed invalid after one repair attempt: ${problems.slice(0, 800)}`,
      true,
    );
  }

  async generateSurvey(request: GenerateRequest, check: DraftCheck = () => []): Promise<GeneratedDraft> {
    // The request waits for this: AI_TIMEOUT_MS bounds the whole generation, the repair included.
    const deadline = Date.now() + this.config.timeoutMs;
    const redact = redactor([]);
    const messages: Message[] = [
      {
        role: 'system',
        content:
          'You design employee and customer surveys. Answer with JSON only. Write at most the requested number of questions, in English, in a sensible order: ' +
          'NPS (0-10, min and max null) first, then rating scales (min 0 or 1, max 2 to 10, with labels), then single_choice and multiple_choice (2 to 50 choices), open text questions last. ' +
          'Where several agreement statements share one scale, ask them as one matrix (a Likert grid): rows holds its 2 to 30 statements, min, max, minLabel and maxLabel its scale. ' +
          'Where several statements share labelled answers instead (for example Yes, Partly, No), the matrix takes them as choices (2 to 10 column labels) and min and max are null. ' +
          'ranking asks to order 2 to 20 choices; number takes min, max (or null) and integer; date takes minDate and maxDate (YYYY-MM-DD, or null). ' +
          'allowOther adds an "Other" entry with text to single_choice and multiple_choice; allowNotApplicable lets nps, rating and matrix be answered N/A. ' +
          'key names what a question measures, the same in every survey that asks it (lowercase letters, digits, dot, dash, underscore; for example engagement.recommend), or null. ' +
          'displayIf shows a question only to some people (for example an open follow-up to those who gave a low score): rules on earlier questions, named by number from 1, combined with all or any; ' +
          'op equals, notEquals or in (value a number, a choice label, or for in an array of them), gte or lte (a number), answered or notAnswered (value null). ' +
          'Use null for fields that do not apply, false for options that do not apply, and empty choices and rows arrays where there are none.',
      },
      {
        role: 'user',
        content: `Survey request: ${redact(request.prompt)}\nNumber of questions: at most ${request.questionCount}.${request.title ? `\nTitle: ${redact(request.title)}` : ''}`,
      },
    ];
    // What the contract refuses in the newer parts is dropped or repaired here; anything else goes back to the model.
    const fixed = (value: GeneratedSurvey) => {
      const { draft, adjustments } = toDraft(value, request);
      const result = fixDraft(draft, check);
      return { ...result, adjustments: [...adjustments, ...result.adjustments] };
    };
    const generated = await this.structured<GeneratedSurvey>(
      messages,
      'survey',
      generatedSurveySchema,
      validateGenerated,
      (value) => {
        const problems =
          value.questions.length > request.questionCount
            ? [`/questions has ${value.questions.length} questions, at most ${request.questionCount} were asked for`]
            : [];
        return [...problems, ...fixed(value).problems.map((p) => `${p.path} ${p.message}`)];
      },
      deadline,
    );
    const { draft, adjustments } = fixed(generated);
    return { draft, adjustments };
  }

  async analyseComments(input: AnalysisInput): Promise<TextFindings> {
    // The same redactor as the comments had; applying it to them again changes nothing and keeps this file
    // readable as "nothing unredacted is sent".
    const redact = redactor(input.respondentNames);
    // The newest comments first (responses come newest first), within the limits.
    const sent: number[] = [];
    let total = 0;
    for (let i = 0; i < input.comments.length && sent.length < REMOTE_LIMITS.maxComments; i++) {
      const length = Math.min(REMOTE_LIMITS.maxCommentChars, input.comments[i]!.text.length);
      if (total + length > REMOTE_LIMITS.maxTotalChars) break;
      total += length;
      sent.push(i);
    }
    const questionLines = input.questions.map(
      (q) =>
        `- ${q.id} (${q.type}): ${redact(q.text)}${q.averageScore !== null ? ` — average ${q.averageScore}, ${Math.round((q.normalizedScore ?? 0) * 100)} % of scale, ${q.answerCount} answers` : ''}`,
    );
    const commentLines = sent.map(
      (i, n) =>
        `[${n + 1}] (${input.comments[i]!.questionId}) ${redact(input.comments[i]!.text.slice(0, REMOTE_LIMITS.maxCommentChars)).replace(/\s+/g, ' ')}`,
    );
    const messages: Message[] = [
      {
        role: 'system',
        content:
          'You analyse employee survey comments. Answer with JSON only. For every comment number give a sentiment score from -1 (negative) to 1 (positive). ' +
          'Group comments into at most 20 themes (short lower-case names), each with keywords, the comment numbers it comes from, up to 3 quotes copied exactly from those comments, and one recommendation. ' +
          'Write a short summary (a few sentences). language is the BCP 47 tag of the comments (for example "en"). Never guess identities; [name], [email], [phone] and [url] are redactions.',
      },
      {
        role: 'user',
        content: `Survey: ${redact(input.surveyTitle)}\n${input.focus ? `Focus: ${redact(input.focus)}\n` : ''}Questions:\n${questionLines.join('\n')}\n\nComments:\n${commentLines.join('\n')}`,
      },
    ];
    const count = sent.length;
    const result = await this.structured<RemoteAnalysis>(
      messages,
      'analysis',
      analysisSchema,
      validateAnalysis,
      (value) => {
        const bad = value.sentiments
          .filter((s) => s.comment > count)
          .map((s) => `/sentiments: comment ${s.comment} does not exist`);
        const badThemes = value.themes.flatMap((t, k) =>
          t.comments.filter((c) => c > count).map((c) => `/themes/${k}/comments: comment ${c} does not exist`),
        );
        return [...bad, ...badThemes];
      },
    );
    // Comments that were not sent get no score from the model: they are left out of the analysis by the caller.
    const sentiments = new Array<number>(input.comments.length).fill(0);
    for (const s of result.sentiments) sentiments[sent[s.comment - 1]!] = s.score;
    const themes: FoundTheme[] = result.themes.map((t) => ({
      // Lower-cased after redaction, when the result is assembled.
      name: t.name,
      keywords: t.keywords,
      comments: [...new Set(t.comments)].map((c) => sent[c - 1]!),
      quotes: t.quotes,
      recommendation: t.recommendation,
    }));
    return { language: result.language || null, sentiments, themes, summary: result.summary, analysedComments: sent };
  }
}

/** Choice ids as `createSurvey` would give them, written out so that display rules can name them. */
const choicesOf = (labels: readonly string[]) => labels.map((label, k) => ({ id: `c_${k + 1}`, label }));

/** A rule's value, a choice's label read as its id when the question it names has that choice. */
function ruleValue(value: RuleValue, target: GeneratedQuestion | undefined): RuleValue {
  if (Array.isArray(value)) return value.map((v) => ruleValue(v, target) as number | string);
  if (typeof value !== 'string' || !target) return value;
  const k = target.choices.findIndex((label) => label.trim().toLowerCase() === value.trim().toLowerCase());
  return k < 0 ? value : `c_${k + 1}`;
}

/**
 * The proposal in the contract's shape, each question `q_<its number>` so that rules name the question they meant
 * (draft-fixes.ts numbers them again). An option on a question that cannot take it is dropped and reported here.
 */
function toDraft(
  value: GeneratedSurvey,
  request: GenerateRequest,
): { draft: SurveyDraft; adjustments: DraftAdjustment[] } {
  const adjustments: DraftAdjustment[] = [];
  const questions = value.questions.map((q, i): QuestionInput => {
    const at = `/questions/${i}`;
    const option = (name: 'allowOther' | 'allowNotApplicable', types: readonly string[]) => {
      // Only a true option is one: false, or none at all, asks for nothing.
      if (!q[name]) return {};
      if (types.includes(q.type)) return { [name]: true };
      adjustments.push({
        path: `${at}/${name}`,
        action: 'dropped',
        reason: `${name} applies to ${types.join(', ')} questions, not ${q.type}`,
      });
      return {};
    };
    const other = option('allowOther', ['single_choice', 'multiple_choice']);
    const notApplicable = option('allowNotApplicable', ['nps', 'rating', 'matrix']);
    const rules = q.displayIf?.rules ?? [];
    const common = {
      id: `q_${i + 1}`,
      text: q.text,
      required: q.required,
      ...(typeof q.key === 'string' && q.key !== '' ? { key: q.key } : {}),
      ...(q.displayIf && rules.length > 0
        ? {
            displayIf: {
              [q.displayIf.combine]: rules.map((rule): DisplayRule => ({
                questionId: `q_${rule.question}`,
                op: rule.op,
                ...(rule.value === null
                  ? {}
                  : { value: ruleValue(rule.value, value.questions[rule.question - 1]) as NonNullable<RuleValue> }),
              })),
            } as QuestionInput['displayIf'],
          }
        : {}),
    };
    switch (q.type) {
      case 'nps':
        return { ...common, type: 'nps', ...notApplicable };
      case 'rating':
        return {
          ...common,
          type: 'rating',
          min: q.min ?? 1,
          max: q.max ?? 5,
          minLabel: q.minLabel,
          maxLabel: q.maxLabel,
          ...notApplicable,
        };
      case 'single_choice':
        return { ...common, type: 'single_choice', choices: choicesOf(q.choices), ...other };
      case 'multiple_choice':
        return { ...common, type: 'multiple_choice', choices: choicesOf(q.choices), ...other };
      case 'text':
        return { ...common, type: 'text', maxLength: 2000 };
      case 'matrix': {
        const rows = (q.rows ?? []).map((text, k) => ({ id: `r_${k + 1}`, text }));
        if (q.choices.length === 0)
          return {
            ...common,
            type: 'matrix',
            rows,
            scale: { min: q.min ?? 1, max: q.max ?? 5, minLabel: q.minLabel, maxLabel: q.maxLabel },
            ...notApplicable,
          };
        // Labelled columns: a matrix has one or the other, so a scale proposed beside them goes.
        for (const field of ['min', 'max'] as const)
          if (q[field] !== null)
            adjustments.push({
              path: `${at}/${field}`,
              action: 'dropped',
              reason: 'a matrix with choices answers in labelled columns, not on a numeric scale',
            });
        return { ...common, type: 'matrix', rows, columns: choicesOf(q.choices), ...notApplicable };
      }
      case 'ranking':
        return { ...common, type: 'ranking', choices: choicesOf(q.choices) };
      case 'number':
        return { ...common, type: 'number', min: q.min, max: q.max, integer: q.integer ?? false };
      case 'date':
        return { ...common, type: 'date', min: q.minDate ?? null, max: q.maxDate ?? null };
    }
  });
  return {
    draft: { title: request.title ?? value.title, description: value.description || null, questions },
    adjustments,
  };
}
