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
import type {
  AiProvider,
  AnalysisInput,
  DraftCheck,
  FoundTheme,
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

/** A flat question shape every structured-output implementation accepts (no oneOf); mapped to the contract's after. */
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
        required: ['type', 'text', 'required', 'min', 'max', 'minLabel', 'maxLabel', 'choices'],
        properties: {
          type: { type: 'string', enum: ['nps', 'rating', 'single_choice', 'multiple_choice', 'text'] },
          text: { type: 'string', minLength: 1, maxLength: 500 },
          required: { type: 'boolean' },
          min: nullable({ type: 'integer' }),
          max: nullable({ type: 'integer' }),
          minLabel: nullable({ type: 'string', maxLength: 100 }),
          maxLabel: nullable({ type: 'string', maxLength: 100 }),
          choices: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 200 } },
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

const validateGenerated: ValidateFunction = ajv.compile(generatedSurveySchema);
const validateAnalysis: ValidateFunction = ajv.compile(analysisSchema);

interface GeneratedQuestion {
  type: 'nps' | 'rating' | 'single_choice' | 'multiple_choice' | 'text';
  text: string;
  required: boolean;
  min: number | null;
  max: number | null;
  minLabel: string | null;
  maxLabel: string | null;
  choices: string[];
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
    let response: Response;
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
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new ProviderError(
          'ai_provider_timeout',
          `The AI provider did not answer within ${this.config.timeoutMs} ms.`,
          true,
        );
      throw new ProviderError('ai_provider_unavailable', 'The AI provider could not be reached.', true);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new ProviderError(
          'ai_provider_timeout',
          `The AI provider did not answer within ${this.config.timeoutMs} ms.`,
          true,
        );
      throw new ProviderError('ai_provider_unavailable', 'The AI provider closed the connection.', true);
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

  async generateSurvey(request: GenerateRequest, check: DraftCheck = () => []): Promise<SurveyDraft> {
    // The request waits for this: AI_TIMEOUT_MS bounds the whole generation, the repair included.
    const deadline = Date.now() + this.config.timeoutMs;
    const redact = redactor([]);
    const messages: Message[] = [
      {
        role: 'system',
        content:
          'You design employee and customer surveys. Answer with JSON only. Write at most the requested number of questions, in English, in a sensible order: ' +
          'NPS (0-10, min and max null) first, then rating scales (min 0 or 1, max 2 to 10, with labels), then single_choice and multiple_choice (2 to 50 choices), open text questions last. ' +
          'Use null for fields that do not apply and an empty choices array for questions without choices.',
      },
      {
        role: 'user',
        content: `Survey request: ${redact(request.prompt)}\nNumber of questions: at most ${request.questionCount}.${request.title ? `\nTitle: ${redact(request.title)}` : ''}`,
      },
    ];
    const generated = await this.structured<{ title: string; description: string; questions: GeneratedQuestion[] }>(
      messages,
      'survey',
      generatedSurveySchema,
      validateGenerated,
      (value) => {
        const draft = toDraft(value, request);
        const problems =
          value.questions.length > request.questionCount
            ? [`/questions has ${value.questions.length} questions, at most ${request.questionCount} were asked for`]
            : [];
        return [...problems, ...check(draft)];
      },
      deadline,
    );
    return toDraft(generated, request);
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

function toDraft(
  value: { title: string; description: string; questions: GeneratedQuestion[] },
  request: GenerateRequest,
): SurveyDraft {
  return {
    title: request.title ?? value.title,
    description: value.description || null,
    questions: value.questions.map((q) => {
      const common = { text: q.text, required: q.required };
      switch (q.type) {
        case 'nps':
          return { ...common, type: 'nps' as const };
        case 'rating':
          return {
            ...common,
            type: 'rating' as const,
            min: q.min ?? 1,
            max: q.max ?? 5,
            minLabel: q.minLabel,
            maxLabel: q.maxLabel,
          };
        case 'single_choice':
          return { ...common, type: 'single_choice' as const, choices: q.choices.map((label) => ({ label })) };
        case 'multiple_choice':
          return { ...common, type: 'multiple_choice' as const, choices: q.choices.map((label) => ({ label })) };
        case 'text':
          return { ...common, type: 'text' as const, maxLength: 2000 };
      }
    }),
  };
}
