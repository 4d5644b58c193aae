/**
 * Distributions: send a survey by e-mail, personal link, embed or kiosk code to a targeted set of respondents, and
 * say what a link or a kiosk code opens. The pages those links and codes open are the respondent-pages module's.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { distributionsJobs } from './jobs.js';
export {
  findDistributionWithPrevious,
  forgetResponsesOfRecipients,
  isUnsubscribed,
  unsubscribe,
  type DistributionRow,
  type RecipientRow,
} from './repository.js';
export {
  escapeHtml,
  interfaceLanguageOf,
  wordsFor,
  type InterfaceWords,
  type Params,
  type TextKey,
} from './interface-words.js';
export { openByCode } from './kiosk.js';
export { openLink, type LinkTarget } from './links.js';
export { answerUrl } from './service.js';
