/**
 * Names for the document's schemas, so integrators write `Survey` rather than
 * `components['schemas']['Survey']`. Every alias is exactly the generated schema type; a schema the
 * document does not define (yet) resolves to `unknown` instead of breaking the build.
 */
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** The generated type of the named schema of the document (`unknown` if it has no such schema). */
export type Schema<Name extends string, Fallback = unknown> = Name extends keyof Schemas ? Schemas[Name] : Fallback;

export type Meta = Schema<'Meta'>;
export type Pagination = Schema<'Pagination'>;
export type ErrorCode = Schema<'ErrorCode', string>;
export type ErrorDetail = Schema<'ErrorDetail'>;
/** The body of every error answer: `{ error: { code, message, status, details }, meta }`. */
export type ApiError = Schema<'ErrorEnvelope'>;
export type ErrorEnvelope = Schema<'ErrorEnvelope'>;
/** The `error` member of an error answer. */
export type ApiErrorObject = Schema<'Error'>;

export type Survey = Schema<'Survey'>;
export type SurveyCreate = Schema<'SurveyCreate'>;
export type SurveyUpdate = Schema<'SurveyUpdate'>;
export type Question = Schema<'Question'>;
/** A survey response (named so it does not shadow the global fetch `Response`). */
export type SurveyResponse = Schema<'Response'>;
export type Answer = Schema<'Answer'>;
export type Respondent = Schema<'Respondent'>;
export type SyncJob = Schema<'SyncJob'>;
export type DistributionRequest = Schema<'DistributionRequest'>;
export type Distribution = Schema<'Distribution'>;
export type Webhook = Schema<'Webhook'>;
export type WebhookDelivery = Schema<'WebhookDelivery'>;
export type ApiKey = Schema<'ApiKey'>;
export type ApiKeyCreated = Schema<'ApiKeyCreated'>;
export type Export = Schema<'Export'>;
export type StaticAnalytics = Schema<'StaticAnalytics'>;
export type AiAnalysis = Schema<'AiAnalysis'>;
export type SmartAnalytics = Schema<'SmartAnalytics'>;

/** A webhook event as delivered; the document's `WebhookEvent` schema when it defines one. */
export type WebhookEvent = Schema<'WebhookEvent', { id: string; type: string; [key: string]: unknown }>;
