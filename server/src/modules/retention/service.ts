/**
 * Retention rules: reading and replacing an environment's policy (a change and its audit entry commit together),
 * previewing the next run with the run's own queries, and mapping rows to the contract's shapes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { validationFailed, type ErrorDetail } from '../../http/index.js';
import { iso } from '../../lib/time.js';
import { countEventsBefore } from '../events/index.js';
import { countFilesCompletedBefore, exportsHoldingWhere } from '../exports/index.js';
import { countDueResponses, dueResponsesCondition, surveyClosings } from '../surveys/index.js';
import { countFinishedDeliveriesBefore } from '../webhooks/index.js';
import { addResponses } from './counts.js';
import { DEFAULT_POLICY, planOf } from './plan.js';
import { findSettings, latestRun, noCounts, saveSettings, type RunRow, type SettingsRow } from './repository.js';
import type { RetentionCounts, RetentionRun, RetentionSettings, RetentionSettingsUpdate } from './tables.js';

type Policy = typeof DEFAULT_POLICY;

function toRun(row: RunRow): RetentionRun {
  return {
    id: row.id,
    status: row.status,
    startedAt: row.started_at.toISOString(),
    completedAt: iso(row.completed_at),
    removed: row.removed,
  };
}

function toSettings(policy: Policy, updatedAt: Date | null, run: RunRow | undefined): RetentionSettings {
  return {
    responses: policy.responses,
    exportFiles: { afterDays: policy.export_files_days },
    events: { afterDays: policy.events_days },
    webhookDeliveries: { afterDays: policy.webhook_deliveries_days },
    surveyExceptions: policy.survey_exceptions,
    legalHolds: policy.legal_holds,
    updatedAt: iso(updatedAt),
    lastRun: run ? toRun(run) : null,
  };
}

const policyOf = (row: SettingsRow | undefined): Policy => row ?? DEFAULT_POLICY;

export async function getSettings(db: DbOrTx, tenant: Tenant): Promise<RetentionSettings> {
  const [row, run] = await Promise.all([findSettings(db, tenant), latestRun(db, tenant)]);
  return toSettings(policyOf(row), row?.updated_at ?? null, run);
}

/**
 * Replaces the policy. `audit` runs in the same transaction when the policy changed (a `PUT` of the same policy
 * writes no entry). A hold repeated with the same survey and reason keeps the time it was placed.
 */
export async function updateSettings(
  db: Db,
  tenant: Tenant,
  body: RetentionSettingsUpdate,
  audit: (tx: DbOrTx) => Promise<void>,
): Promise<RetentionSettings> {
  return db.transaction().execute(async (tx) => {
    const before = await findSettings(tx, tenant);
    await checkSurveys(tx, tenant, body);
    const now = new Date().toISOString();
    const placed = new Map(policyOf(before).legal_holds.map((h) => [`${h.surveyId}\n${h.reason}`, h.placedAt]));
    const policy: Policy = {
      responses: body.responses ?? DEFAULT_POLICY.responses,
      export_files_days: body.exportFiles?.afterDays ?? DEFAULT_POLICY.export_files_days,
      events_days: body.events?.afterDays ?? DEFAULT_POLICY.events_days,
      webhook_deliveries_days: body.webhookDeliveries?.afterDays ?? DEFAULT_POLICY.webhook_deliveries_days,
      survey_exceptions: (body.surveyExceptions ?? []).map((e) => ({ surveyId: e.surveyId, responses: e.responses })),
      legal_holds: (body.legalHolds ?? []).map((h) => ({
        surveyId: h.surveyId,
        reason: h.reason,
        placedAt: placed.get(`${h.surveyId}\n${h.reason}`) ?? now,
      })),
    };
    if (before && isDeepStrictEqual(policyWithKeysOf(before), policy)) {
      return toSettings(before, before.updated_at, await latestRun(tx, tenant));
    }
    const saved = await saveSettings(tx, tenant, policy);
    if (!isDeepStrictEqual(policyWithKeysOf(policyOf(before)), policy)) await audit(tx);
    return toSettings(policyOf(saved), saved.updated_at, await latestRun(tx, tenant));
  });
}

/** The policy's values alone (a row read back carries its tenant and time too). */
function policyWithKeysOf(p: Policy): Policy {
  return {
    responses: p.responses,
    export_files_days: p.export_files_days,
    events_days: p.events_days,
    webhook_deliveries_days: p.webhook_deliveries_days,
    survey_exceptions: p.survey_exceptions,
    legal_holds: p.legal_holds,
  };
}

/** Each survey named at most once among the exceptions, and every survey named (there or in a hold) exists. */
async function checkSurveys(db: DbOrTx, tenant: Tenant, body: RetentionSettingsUpdate): Promise<void> {
  const problems: ErrorDetail[] = [];
  const exceptions = body.surveyExceptions ?? [];
  const holds = body.legalHolds ?? [];
  const seen = new Set<string>();
  exceptions.forEach((e, i) => {
    if (seen.has(e.surveyId))
      problems.push({
        path: `/body/surveyExceptions/${i}/surveyId`,
        code: 'duplicate',
        message: `survey ${e.surveyId} has an exception already`,
      });
    seen.add(e.surveyId);
  });
  const named = [...exceptions.map((e) => e.surveyId), ...holds.flatMap((h) => (h.surveyId ? [h.surveyId] : []))];
  if (named.length > 0) {
    const existing = new Set((await surveyClosings(db, tenant)).map((s) => s.id));
    exceptions.forEach((e, i) => {
      if (!existing.has(e.surveyId))
        problems.push({
          path: `/body/surveyExceptions/${i}/surveyId`,
          code: 'not_found',
          message: `no survey ${e.surveyId} in this environment`,
        });
    });
    holds.forEach((h, i) => {
      if (h.surveyId && !existing.has(h.surveyId))
        problems.push({
          path: `/body/legalHolds/${i}/surveyId`,
          code: 'not_found',
          message: `no survey ${h.surveyId} in this environment`,
        });
    });
  }
  if (problems.length > 0) throw validationFailed(problems);
}

/**
 * What a run starting now would remove: the plan a run makes (plan.ts), counted with the queries the run's batches
 * select with, files holding due responses counted once.
 */
export async function preview(db: DbOrTx, tenant: Tenant, asOf = new Date()): Promise<RetentionCounts> {
  const plan = await planOf(db, tenant, policyOf(await findSettings(db, tenant)), asOf);
  const counts = noCounts();
  const holdingFiles: string[] = [];
  for (const survey of plan.surveys) {
    const n = await countDueResponses(db, tenant, survey.due);
    if (n === 0) continue;
    if (survey.held) {
      addResponses(counts, survey.surveyId, 'heldResponses', n);
      continue;
    }
    addResponses(counts, survey.surveyId, survey.action === 'delete' ? 'deletedResponses' : 'anonymizedResponses', n);
    for (const file of await exportsHoldingWhere(
      db,
      tenant,
      [survey.surveyId],
      dueResponsesCondition(tenant, survey.due),
    ))
      holdingFiles.push(file.id);
  }
  if (plan.heldWhole) return counts;
  counts.exportFiles =
    holdingFiles.length +
    (await countFilesCompletedBefore(db, tenant, plan.exportFilesBefore, plan.heldSurveyIds, holdingFiles));
  counts.webhookDeliveries = await countFinishedDeliveriesBefore(db, tenant, plan.deliveriesBefore);
  counts.events = await countEventsBefore(db, tenant, plan.eventsBefore);
  return counts;
}
