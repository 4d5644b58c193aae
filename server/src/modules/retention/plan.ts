/**
 * What a retention policy reaches at an instant: per survey, its rule, whether a legal hold keeps it, and which of
 * its responses are due; and the instants before which export files, events and deliveries go. The preview counts
 * this plan and a run removes it, with the same queries (count.ts), so the preview says what the run then does.
 */
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { surveyClosings, type DueResponses } from '../surveys/index.js';
import type { SettingsRow } from './repository.js';
import type { RetentionRule } from './tables.js';

export interface SurveyPlan {
  surveyId: string;
  action: RetentionRule['action'];
  /** Kept by a legal hold: counted as held, never removed. */
  held: boolean;
  due: DueResponses;
}

export interface Plan {
  /** A hold on the whole environment: nothing is removed. */
  heldWhole: boolean;
  surveys: SurveyPlan[];
  heldSurveyIds: string[];
  exportFilesBefore: Date;
  eventsBefore: Date;
  deliveriesBefore: Date;
}

const DAY_MS = 86_400_000;
const daysBefore = (asOf: Date, days: number) => new Date(asOf.getTime() - days * DAY_MS);

/** The policy when an environment has set none: the service's own limits, responses kept. */
export const DEFAULT_POLICY: Omit<SettingsRow, 'organization_id' | 'environment' | 'updated_at'> = {
  responses: null,
  export_files_days: 7,
  events_days: 30,
  webhook_deliveries_days: 30,
  survey_exceptions: [],
  legal_holds: [],
};

export async function planOf(db: DbOrTx, tenant: Tenant, policy: typeof DEFAULT_POLICY, asOf: Date): Promise<Plan> {
  const heldWhole = policy.legal_holds.some((h) => h.surveyId === null);
  const heldSurveyIds = policy.legal_holds.flatMap((h) => (h.surveyId === null ? [] : [h.surveyId]));
  const exceptions = new Map(policy.survey_exceptions.map((e) => [e.surveyId, e.responses]));
  const surveys: SurveyPlan[] = [];
  const anyRule = policy.responses !== null || policy.survey_exceptions.some((e) => e.responses !== null);
  for (const survey of anyRule ? await surveyClosings(db, tenant) : []) {
    const rule = exceptions.has(survey.id) ? exceptions.get(survey.id)! : policy.responses;
    if (!rule) continue;
    const cutoff = daysBefore(asOf, rule.afterDays);
    // From the close: every response of a survey closed before the cutoff, none of one still open.
    if (rule.basis === 'survey_close' && !(survey.closed_at && survey.closed_at < cutoff)) continue;
    surveys.push({
      surveyId: survey.id,
      action: rule.action,
      held: heldWhole || heldSurveyIds.includes(survey.id),
      due: {
        surveyId: survey.id,
        submittedBefore: rule.basis === 'submission' ? cutoff : null,
        identifiedOnly: rule.action === 'anonymize',
      },
    });
  }
  return {
    heldWhole,
    surveys,
    heldSurveyIds,
    exportFilesBefore: daysBefore(asOf, policy.export_files_days),
    eventsBefore: daysBefore(asOf, policy.events_days),
    deliveriesBefore: daysBefore(asOf, policy.webhook_deliveries_days),
  };
}
