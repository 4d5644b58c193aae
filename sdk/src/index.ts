/**
 * `@survey-service/sdk`: a typed client for the Survey Service API v1.
 *
 * ```ts
 * import { createClient } from '@survey-service/sdk';
 * const client = createClient({ apiKey: process.env.SURVEY_API_KEY!, baseUrl: 'https://api.surveyservice.dev' });
 * const surveys = await client.surveys.list({ pageSize: 50 });
 * ```
 */
export {
  createClient,
  type ClientConfig,
  type SurveyServiceClient,
  type ClientResources,
  type ResourceHelpers,
} from './client.js';
export { type CallOptions, type ResultOf, type ItemOf, type QueryOf, type BodyOf } from './resources-runtime.js';
export { type Resources } from './generated/resources.js';
export { waitForAiAnalysis, waitForDistribution, waitForPrivacyRequest } from './jobs.js';
export {
  SurveyServiceError,
  ValidationError,
  AuthenticationError,
  PermissionError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ServerError,
  TimeoutError,
  errorFromResponse,
  type ErrorDetailLike,
  type SurveyServiceErrorInit,
} from './errors.js';
export { unwrap, unwrapEnvelope, type ApiResult, type EnvelopeData } from './unwrap.js';
export { paginate, type ListItem, type ListPath, type PaginateInit } from './pagination.js';
export { waitFor, waitForSyncJob, type WaitOptions } from './polling.js';
export {
  exportResponsesToFile,
  downloadExportToFile,
  waitForExport,
  ExportFailedError,
  type DownloadOptions,
} from './exports.js';
export { type RetryOptions, type RetryEvent } from './retry.js';
export {
  type SyncRecord,
  type SyncBody,
  type SegmentField,
  type AnalyticsSegmentBy,
  type AnalyticsFilter,
  type AnalyticsFilters,
  type StaticAnalyticsQuery,
  type SmartAnalyticsQuery,
} from './inputs.js';
export { verifyWebhook, signWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks.js';
export { SDK_VERSION } from './version.js';
export type { paths, components, operations, webhooks } from './generated/openapi.js';
export type * from './types.js';
