/**
 * Retention: each environment's policy for how long responses, export files, events and webhook deliveries are
 * kept (with survey exceptions and legal holds), its preview, and the daily job that applies it.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { retentionJobs, startRetentionRuns } from './jobs.js';
