/**
 * Surveys and their responses: the survey lifecycle, answer validation, and the one writer of a response
 * (`storeResponse`), which every channel (API, personal link, embed) uses.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { validateAnswers } from './answers.js';
export { displayedQuestions, displayLogicSource } from './display-logic.js';
export { surveysJobs } from './jobs.js';
export { normaliseQuestions, showsIdentity } from './questions.js';
export {
  findPreviousCycle,
  findSurvey,
  listLaunchedSurveysWithKey,
  surveyClosings,
  type CycleSurveyRow,
  type SurveyRow,
} from './repository.js';
// The one writer and the one deletion of responses, and forgetting who gave them (an erasure's, privacy module).
export { forgetRespondentOfResponses, storeResponse } from './responses-repository.js';
// What a retention rule reaches (retention module).
export { countDueResponses, dueResponses, dueResponsesCondition, type DueResponses } from './responses-repository.js';
export { removeResponses } from './responses-service.js';
export { createSurvey, findSurveyOrThrow, surveyIdOrThrow } from './service.js';
export { findTranslationContent } from './translations-service.js';
export {
  acceptedLanguages,
  chooseLanguage,
  listedLanguage,
  localizeSurvey,
  offeredLanguages,
  type TranslationInput,
} from './translations.js';
