/**
 * The one interface behind which AI providers sit. A provider writes survey drafts and reads comments; it
 * never sees the database, respondent ids or response ids (comments are numbered for the call only). What it
 * returns is checked and assembled by analysis.ts, the same way for every provider.
 */
import type { Question } from '../../generated/openapi.js';
import type { DraftAdjustment, DraftProblem } from './draft-fixes.js';
import type { GenerateRequest, SurveyDraft } from './offline-generate.js';
import type { AnalysisErrorCode, ProviderName } from './tables.js';

export type { GenerateRequest, SurveyDraft };
type QuestionType = Question['type'];

export interface AnalysisQuestion {
  id: string;
  type: QuestionType;
  text: string;
  /** Mean answer of nps/rating questions, and its place on the scale (0–1). */
  averageScore: number | null;
  normalizedScore: number | null;
  answerCount: number;
}

export interface AnalysisInput {
  surveyTitle: string;
  focus?: string;
  questions: AnalysisQuestion[];
  /** The text answers, numbered by position, already redacted (analysis.ts, redact.ts). */
  comments: Array<{ questionId: string; text: string }>;
  /**
   * The names (or name parts) of the organization's respondents that occur in the texts of this analysis: what
   * the comments were redacted with, and what a remote provider redacts the survey's own texts with.
   */
  respondentNames: string[];
}

export interface FoundTheme {
  name: string;
  keywords: string[];
  /** Positions in `AnalysisInput.comments`. */
  comments: number[];
  /** Candidate quotes; only verbatim substrings of the (redacted) answers given are kept. */
  quotes: string[];
  /** A recommendation that follows from the theme, if the provider has one. */
  recommendation?: string;
}

export interface TextFindings {
  /** BCP 47 tag of the comments' language; null without text. */
  language: string | null;
  /** −1…1 for each comment, by position. */
  sentiments: number[];
  themes: FoundTheme[];
  /** A provider's own summary (remote); the offline analyser's is written from the figures. */
  summary?: string;
  /** Positions of the comments actually analysed, when not all were (a remote provider's limits). */
  analysedComments?: number[];
}

/** The checks of a survey draft beyond a provider's own schema (the contract's, as createSurvey applies them). */
export type DraftCheck = (draft: SurveyDraft) => DraftProblem[];

/** A provider's draft, and what was dropped or repaired in its proposal to make it valid (draft-fixes.ts). */
export interface GeneratedDraft {
  draft: SurveyDraft;
  adjustments: DraftAdjustment[];
}

export interface AiProvider {
  readonly name: ProviderName;
  readonly model: string;
  /** The model named for generated surveys (the offline provider's question bank differs from its analyser). */
  readonly generationModel: string;
  /**
   * A draft that passes `check`. A remote provider drops or repairs the parts of its proposal that can go (reported
   * in `adjustments`), asks the model once more about the rest, then fails with `ai_output_invalid`.
   */
  generateSurvey(request: GenerateRequest, check?: DraftCheck): Promise<GeneratedDraft>;
  analyseComments(input: AnalysisInput): Promise<TextFindings>;
}

/** A provider call that failed; `retryable` ones are tried again inside an analysis job. */
export class ProviderError extends Error {
  constructor(
    readonly code: AnalysisErrorCode,
    message: string,
    readonly retryable: boolean,
    /** From a 429's or 503's `Retry-After`. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
