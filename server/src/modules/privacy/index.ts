/**
 * Privacy: data-subject requests — a copy of everything held about one person (access) or their erasure from every
 * copy — carried out by a background job, each with an inventory of what was found.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { privacyJobs } from './jobs.js';
