/**
 * Names for the document's schemas, so integrators write `Survey` rather than
 * `components['schemas']['Survey']`. Each alias is exactly the generated type: when the document renames or
 * drops a schema, the SDK stops compiling instead of drifting.
 */
import type { components, webhooks } from './generated/openapi.js';

type Schemas = components['schemas'];

/** The generated type of any named schema of the document: `Schema<'SurveySettings'>`. */
export type Schema<Name extends keyof Schemas> = Schemas[Name];

// Envelope and errors
export type Meta = Schemas['Meta'];
export type Pagination = Schemas['Pagination'];
/** The body of every error answer: `{ error: { code, message, status, details }, meta }`. */
export type ApiError = Schemas['ErrorEnvelope'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
/** The `error` member of an error answer. */
export type ApiErrorObject = Schemas['Error'];
export type ErrorCode = Schemas['ErrorCode'];
export type ErrorDetail = Schemas['ErrorDetail'];

// Surveys and responses
export type Survey = Schemas['Survey'];
export type SurveyStatus = Schemas['SurveyStatus'];
export type SurveyCreate = Schemas['SurveyCreate'];
export type SurveyUpdate = Schemas['SurveyUpdate'];
export type SurveyGenerateRequest = Schemas['SurveyGenerateRequest'];
export type Question = Schemas['Question'];
export type QuestionInput = Schemas['QuestionInput'];
/** A survey response (named so it does not shadow the global fetch `Response`). */
export type SurveyResponse = Schemas['Response'];
export type ResponseSubmit = Schemas['ResponseSubmit'];
export type Answer = Schemas['Answer'];

// Exports and analytics
export type Export = Schemas['Export'];
export type ExportRequest = Schemas['ExportRequest'];
export type StaticAnalytics = Schemas['StaticAnalytics'];
export type AiAnalysis = Schemas['AiAnalysis'];
export type AiAnalysisRequest = Schemas['AiAnalysisRequest'];
export type SmartAnalytics = Schemas['SmartAnalytics'];

// Distributions
export type DistributionRequest = Schemas['DistributionRequest'];
export type DistributionPreviewRequest = Schemas['DistributionPreviewRequest'];
export type AudiencePreview = Schemas['AudiencePreview'];
export type Distribution = Schemas['Distribution'];
export type DistributionRecipient = Schemas['DistributionRecipient'];
export type TargetingFilter = Schemas['TargetingFilter'];

// Respondents and sync
export type Respondent = Schemas['Respondent'];
export type RespondentUpsert = Schemas['RespondentUpsert'];
export type SyncRequest = Schemas['SyncRequest'];
export type SyncMode = Schemas['SyncMode'];
/** The `data` of `POST /api/v1/respondents/sync` (202). */
export type SyncJobAccepted = Schemas['SyncJobAccepted'];
export type SyncJob = Schemas['SyncJob'];
export type SyncJobStatus = Schemas['SyncJobStatus'];
export type SyncStats = Schemas['SyncStats'];

// Privacy requests
export type PrivacyRequest = Schemas['PrivacyRequest'];
export type PrivacyRequestCreate = Schemas['PrivacyRequestCreate'];

// Webhooks and events
export type Webhook = Schemas['Webhook'];
export type WebhookCreate = Schemas['WebhookCreate'];
/** The create answer, with the `whsec_…` secret shown once. */
export type WebhookCreated = Schemas['WebhookCreated'];
export type WebhookUpdate = Schemas['WebhookUpdate'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** Any event, as delivered to webhooks and listed by `GET /api/v1/events`; narrow it on `type`. */
export type Event = Schemas['Event'];
export type EventType = Schemas['EventType'];
/** The payload the document's `webhooks` section gives the event named `Name`. */
type DeliveredPayload<Name extends keyof webhooks> =
  NonNullable<webhooks[Name]['post']> extends { requestBody: { content: { 'application/json': infer Body } } }
    ? Body
    : never;
/**
 * What `constructEvent` and `verifyWebhook` return: one member per event of the document's `webhooks` section,
 * each with its own `type`, so `switch (event.type)` narrows `data` (generated with the rest of the types).
 */
export type WebhookEvent = { [Name in keyof webhooks]: DeliveredPayload<Name> & { type: Name } }[keyof webhooks];

// Keys and account
export type ApiKey = Schemas['ApiKey'];
export type ApiKeyCreate = Schemas['ApiKeyCreate'];
/** The create answer, with the full key value shown once. */
export type ApiKeyCreated = Schemas['ApiKeyCreated'];
export type Scope = Schemas['Scope'];
export type Environment = Schemas['Environment'];
export type Plan = Schemas['Plan'];
export type Me = Schemas['Me'];
