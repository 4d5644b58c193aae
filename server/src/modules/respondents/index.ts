/**
 * Respondents: the people a survey can reach, kept in step with an HR system by record-level upserts and
 * background syncs.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { holdSyncRecords } from './records.js';
export { respondentNamePartsAmong } from './repository.js';
export { checkLater, runSyncJob } from './sync-runner.js';
export { SYNC_QUEUE, type SyncJobData } from './sync-service.js';
