/**
 * An erasure, applied to the holdings found in the same transaction. Each fact goes through its one writer: a
 * response is deleted by the surveys module's deletion (its count, its analytics copy and counts, the exports'
 * deletions list follow from it, as for `deleteResponse`), a kept response forgets its respondent through the
 * surveys module and its analytics copy through the analytics module, a respondent is deleted by the respondents
 * module (its SCIM user goes with it), and export files by the exports
 * module. What no other
 * code writes — recipient rows, event payloads, delivery excerpts, AI results, sync errors, earlier access files —
 * is written here (repository.ts).
 */
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { ApiError } from '../../http/index.js';
import { forgetSubjects, forgottenPersonKey } from '../analytics/index.js';
import { eraseExportFiles, forgetDeletedRespondents } from '../exports/index.js';
import { deleteRespondent } from '../respondents/index.js';
import { forgetRespondentOfResponses, removeResponses } from '../surveys/index.js';
import type { Holdings } from './holdings.js';
import {
  clearDeliveryExcerpts,
  deleteEvents,
  deleteRecipients,
  eraseAccessFiles,
  replaceAnalysisResult,
  replaceEventData,
  replaceSyncErrors,
} from './repository.js';
import { eventPlan, scrubAnalysis, scrubSyncErrors } from './scrub.js';
import type { ErasureScope } from './tables.js';

export async function erase(
  tx: DbOrTx,
  tenant: Tenant,
  erasureId: string,
  h: Holdings,
  scope: ErasureScope,
): Promise<void> {
  // Export files first: which ones hold the person was decided on the responses as they were.
  await eraseExportFiles(
    tx,
    tenant,
    h.exports.map((e) => e.id),
    erasureId,
  );

  // One key for all of the person's kept responses: they go on counting as one respondent.
  const key = forgottenPersonKey();
  const bySurvey = new Map<string, string[]>();
  for (const r of h.responses) bySurvey.set(r.survey_id, [...(bySurvey.get(r.survey_id) ?? []), r.id]);
  for (const [surveyId, ids] of bySurvey) {
    if (scope === 'identity_and_responses') {
      await removeResponses(tx, tenant, surveyId, ids);
    } else {
      await forgetRespondentOfResponses(tx, tenant, surveyId, ids);
      await forgetSubjects(
        tx,
        tenant,
        surveyId,
        ids.map((responseId) => ({ responseId, key })),
      );
    }
  }

  await deleteRecipients(tx, tenant, h.recipients);
  // The deletions list kept whose deleted responses were (to find the files above): no longer.
  await forgetDeletedRespondents(tx, tenant, h.externalIds);

  const deleted: string[] = [];
  const replaced: string[] = [];
  for (const event of h.events) {
    const plan = eventPlan(event, h.person, scope);
    if (plan.kind === 'delete') deleted.push(event.id);
    if (plan.kind === 'replace') {
      await replaceEventData(tx, tenant, event.id, plan.data);
      replaced.push(event.id);
    }
  }
  await deleteEvents(tx, tenant, deleted);
  await clearDeliveryExcerpts(tx, tenant, replaced);

  for (const analysis of h.analyses) {
    const plan = scrubAnalysis(analysis.result, analysis.survey_id, h.person, scope);
    if (plan.kind === 'replace') await replaceAnalysisResult(tx, tenant, analysis.id, plan.data);
  }
  for (const job of h.syncJobs) {
    const plan = scrubSyncErrors(job.errors, h.person);
    if (plan.kind === 'replace') await replaceSyncErrors(tx, tenant, job.id, plan.data);
  }
  await eraseAccessFiles(tx, tenant, h.accessFiles, erasureId);

  for (const respondent of h.respondents) {
    try {
      await deleteRespondent(tx, tenant, respondent.external_id);
    } catch (error) {
      // Deleted since it was read (a DELETE or a replace sync committed in between): nothing left to erase.
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
}
