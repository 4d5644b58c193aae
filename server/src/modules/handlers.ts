/**
 * The handler of every operation of the contract, by operationId. `satisfies HandlerMap` makes a missing or
 * mistyped handler a compile error; the resolver in http/bind.ts makes it a boot error too.
 */
import type { HandlerMap, SemanticChecks } from '../http/index.js';
import * as account from './account/handlers.js';
import * as analytics from './analytics/handlers.js';
import * as ai from './ai/handlers.js';
import * as apiKeys from './api-keys/handlers.js';
import * as events from './events/handlers.js';
import * as exportsModule from './exports/handlers.js';
import * as distributions from './distributions/handlers.js';
import * as meta from './meta/handlers.js';
import * as privacy from './privacy/handlers.js';
import * as audit from './audit/handlers.js';
import * as retention from './retention/handlers.js';
import * as respondents from './respondents/handlers.js';
import * as scim from './scim/handlers.js';
import * as surveys from './surveys/handlers.js';
import * as webhooks from './webhooks/handlers.js';

export const handlers = {
  // Surveys
  listSurveys: surveys.listSurveys,
  createSurvey: surveys.createSurvey,
  generateSurvey: ai.generateSurvey,
  getSurvey: surveys.getSurvey,
  listSurveyVersions: surveys.listSurveyVersions,
  getSurveyTranslation: surveys.getSurveyTranslation,
  upsertSurveyTranslation: surveys.upsertSurveyTranslation,
  deleteSurveyTranslation: surveys.deleteSurveyTranslation,
  updateSurvey: surveys.updateSurvey,
  deleteSurvey: surveys.deleteSurvey,
  launchSurvey: surveys.launchSurvey,
  pauseSurvey: surveys.pauseSurvey,
  closeSurvey: surveys.closeSurvey,
  // Responses
  listResponses: surveys.listResponses,
  submitResponse: surveys.submitResponse,
  getResponse: surveys.getResponse,
  deleteResponse: surveys.deleteResponse,
  // Exports
  exportResponses: exportsModule.exportResponses,
  getExport: exportsModule.getExport,
  downloadExport: exportsModule.downloadExport,
  listExportDeletions: exportsModule.listExportDeletions,
  // Analytics
  getStaticAnalytics: analytics.getStaticAnalytics,
  generateAiAnalysis: ai.generateAiAnalysis,
  getLatestAiAnalysis: ai.getLatestAiAnalysis,
  getAiAnalysis: ai.getAiAnalysis,
  getSmartAnalytics: analytics.getSmartAnalytics,
  listQuestionTrends: analytics.listQuestionTrends,
  getAnalyticsSettings: analytics.getAnalyticsSettings,
  updateAnalyticsSettings: analytics.updateAnalyticsSettings,
  // Distributions
  distributeSurvey: distributions.distributeSurvey,
  previewDistribution: distributions.previewDistribution,
  listDistributions: distributions.listDistributions,
  getDistribution: distributions.getDistribution,
  listDistributionRecipients: distributions.listDistributionRecipients,
  downloadDistributionRecipients: distributions.downloadDistributionRecipients,
  // Webhooks and events
  listWebhooks: webhooks.listWebhooks,
  createWebhook: webhooks.createWebhook,
  getWebhook: webhooks.getWebhook,
  updateWebhook: webhooks.updateWebhook,
  deleteWebhook: webhooks.deleteWebhook,
  rotateWebhookSecret: webhooks.rotateWebhookSecret,
  sendTestWebhook: webhooks.sendTestWebhook,
  listWebhookDeliveries: webhooks.listWebhookDeliveries,
  getWebhookDelivery: webhooks.getWebhookDelivery,
  redeliverWebhookDelivery: webhooks.redeliverWebhookDelivery,
  listEvents: events.listEvents,
  // API keys
  listApiKeys: apiKeys.listApiKeys,
  createApiKey: apiKeys.createApiKey,
  revokeApiKey: apiKeys.revokeApiKey,
  // Respondents
  listRespondents: respondents.listRespondents,
  getRespondent: respondents.getRespondent,
  upsertRespondent: respondents.upsertRespondent,
  deleteRespondent: respondents.deleteRespondent,
  startRespondentSync: respondents.startRespondentSync,
  getSyncJob: respondents.getSyncJob,
  // Privacy
  createPrivacyRequest: privacy.createPrivacyRequest,
  getPrivacyRequest: privacy.getPrivacyRequest,
  listPrivacyRequests: privacy.listPrivacyRequests,
  downloadPrivacyRequest: privacy.downloadPrivacyRequest,
  listAuditLog: audit.listAuditLog,
  getRetentionSettings: retention.getRetentionSettings,
  updateRetentionSettings: retention.updateRetentionSettings,
  previewRetention: retention.previewRetention,
  // SCIM
  getScimServiceProviderConfig: scim.getScimServiceProviderConfig,
  listScimResourceTypes: scim.listScimResourceTypes,
  listScimSchemas: scim.listScimSchemas,
  getScimResourceType: scim.getScimResourceType,
  getScimSchema: scim.getScimSchema,
  listScimUsers: scim.listScimUsers,
  createScimUser: scim.createScimUser,
  getScimUser: scim.getScimUser,
  replaceScimUser: scim.replaceScimUser,
  patchScimUser: scim.patchScimUser,
  deleteScimUser: scim.deleteScimUser,
  submitScimBulk: scim.submitScimBulk,
  // Account and meta
  getMe: account.getMe,
  getOpenApiDocument: meta.getOpenApiDocument,
  getLiveness: meta.getLiveness,
  getReadiness: meta.getReadiness,
} satisfies HandlerMap;

/**
 * Checks the schema cannot express (some need the database), run also when a request is refused before its
 * handler, so one 400 lists everything.
 */
export const semanticChecks: SemanticChecks = {
  submitResponse: surveys.checkSubmitResponse,
  createSurvey: surveys.checkSurveyQuestions,
  updateSurvey: surveys.checkSurveyQuestions,
  upsertSurveyTranslation: surveys.checkSurveyTranslation,
};
