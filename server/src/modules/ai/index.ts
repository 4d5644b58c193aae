/**
 * AI: survey generation and the analysis of open-text answers (offline NLP or an OpenAI-compatible provider),
 * run as background jobs with redaction before any provider reads a word.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { aiJobs } from './jobs.js';
