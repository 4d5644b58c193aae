/**
 * Exports: snapshots of a survey's responses as CSV, XLSX or JSON Lines, built by a background job and
 * downloaded in ranges.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { exportsJobs } from './jobs.js';
// A stored file's byte ranges, for other downloads (the privacy module's access files) to answer alike.
export { parseRange, type RangeAnswer } from './download.js';
// What an erasure (privacy module) does to the exports that hold the erased person's responses.
export { eraseExportFiles, exportsHolding, exportsHoldingDeletedOf, forgetDeletedRespondents } from './repository.js';
// What a retention run shorter than the files' own 7 days removes (retention module).
export { countFilesCompletedBefore, expireFilesCompletedBefore, exportsHoldingWhere } from './repository.js';
