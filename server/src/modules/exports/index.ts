/**
 * Exports: snapshots of a survey's responses as CSV, XLSX or JSON Lines, built by a background job and
 * downloaded in ranges.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { exportsJobs } from './jobs.js';
