/**
 * Respondents: the people a survey can reach, kept in step with an HR system by record-level upserts and
 * background syncs.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { respondentsJobs } from './jobs.js';
// Who may be picked for a distribution.
export { activeRespondent } from './active.js';
export { ManagerLoopError } from './hierarchy.js';
export { setAsideUnsendableRecords, languageTagOrNull } from './records.js';
export { respondentNamePartsAmong } from './repository.js';
// The one writer and the one deletion, for the SCIM server (its users are respondents).
export { deleteRespondent, upsertRespondent } from './service.js';
// A record as the contract shows it, for the privacy module's access files.
export { toRespondent } from './service.js';
export { profileSelect, profileSelection, toProfile, type Profile, type ProfileRow } from './profile.js';
