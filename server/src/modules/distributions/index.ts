/**
 * Distributions: send a survey by e-mail, personal link, embed or kiosk code to a targeted set of respondents, and
 * serve the answer pages those links open and the kiosk page those codes are typed on.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { answerPages } from './answer-page.js';
export { kioskPages } from './kiosk-page.js';
export { distributionsJobs } from './jobs.js';
export { findDistributionWithPrevious, forgetResponsesOfRecipients } from './repository.js';
export { wordsFor } from './interface-words.js';
