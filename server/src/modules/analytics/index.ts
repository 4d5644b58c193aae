/**
 * Analytics: static counts and statistics, smart analytics (drivers, trends) and the anonymity threshold, read
 * from the as-asked copies of responses that the response writer keeps.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { analyticsJobs } from './jobs.js';
// The threshold, and forgetting an erased respondent on the copies of their kept responses (privacy module).
export { findThreshold, forgetSubjects, forgottenPersonKey } from './repository.js';
