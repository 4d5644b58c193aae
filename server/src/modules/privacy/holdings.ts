/**
 * What the service holds about one person, found in the request's own transaction before anything changes, and
 * the inventory that counts it. The same for every type and scope of request: an access request and an erasure,
 * a dry run and the real run, see the same records, so their inventories agree.
 *
 * The person is the set of respondent ids the subject names: the `externalId` itself (responses and recipients
 * may name an id whose record is gone), or, for an e-mail address, every respondent record, recipient snapshot and
 * SCIM user that has the address. Every lookup then goes by those ids, survey by survey where an index is keyed so.
 */
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { exportsHolding, exportsHoldingDeletedOf } from '../exports/index.js';
import {
  analysesOf,
  candidateEvents,
  countAnalyticsCopies,
  deliveriesOf,
  externalIdsWithEmail,
  recipientsOf,
  respondentsOf,
  responsesOf,
  scimUsersOf,
  storedAccessFiles,
  surveysOf,
  syncJobsNaming,
  unsubscribesOf,
  type AnalysisRow,
  type EventRow,
  type RecipientRow,
  type RespondentRow,
  type ResponseRow,
  type ScimUserRow,
  type SurveyInfo,
  type SyncJobRow,
} from './repository.js';
import { analysisHolds, eventHolds, type Person } from './scrub.js';
import { canonical, fingerprintMatches, type Subject } from './subject.js';
import type { Inventory, WebhookRecipient } from './tables.js';

export type Privacy = 'identified' | 'confidential' | 'anonymous';

export const privacyOf = (survey: SurveyInfo): Privacy =>
  survey.settings.privacy ?? (survey.settings.anonymous ? 'anonymous' : 'identified');

export interface Holdings {
  person: Person;
  externalIds: string[];
  /** Every address known to be theirs, in lower case. */
  emails: string[];
  surveys: Map<string, SurveyInfo>;
  respondents: RespondentRow[];
  scimUsers: ScimUserRow[];
  /** Their responses (identified and confidential surveys keep the respondent on the response). */
  responses: ResponseRow[];
  /** Anonymous surveys they answered, from their invitations marked `responded`: which responses cannot be known. */
  notIdentifiable: { surveyId: string; responses: number }[];
  recipients: RecipientRow[];
  analyticsCopies: number;
  events: EventRow[];
  deliveries: number;
  webhookRecipients: WebhookRecipient[];
  exports: { id: string; status: string }[];
  analyses: AnalysisRow[];
  accessFiles: string[];
  syncJobs: SyncJobRow[];
  unsubscribes: { email_lower: string; created_at: Date }[];
}

/** Their free text by survey: text answers and "Other" texts, what an AI quote of them would be cut from. */
function textsOf(responses: readonly ResponseRow[], surveys: ReadonlyMap<string, SurveyInfo>) {
  const texts = new Map<string, string[]>();
  for (const response of responses) {
    const types = new Map((surveys.get(response.survey_id)?.questions ?? []).map((q) => [q.id, q.type]));
    const list = texts.get(response.survey_id) ?? [];
    for (const answer of response.answers) {
      if (types.get(answer.questionId) === 'text' && typeof answer.value === 'string') list.push(answer.value);
      if (typeof answer.other === 'string') list.push(answer.other);
    }
    texts.set(response.survey_id, list);
  }
  return texts;
}

export async function findHoldings(
  db: DbOrTx,
  tenant: Tenant,
  request: { id: string; subject: Subject },
): Promise<Holdings> {
  const { subject } = request;
  const externalIds =
    subject.kind === 'externalId'
      ? [subject.value]
      : await externalIdsWithEmail(db, tenant, canonical('email', subject.value));

  const surveyList = await surveysOf(db, tenant);
  const surveys = new Map(surveyList.map((s) => [s.id, s]));
  const surveyIds = surveyList.map((s) => s.id);
  const respondents = await respondentsOf(db, tenant, externalIds);
  const scimUsers = await scimUsersOf(db, tenant, externalIds);
  const recipients = await recipientsOf(db, tenant, surveyIds, externalIds);
  const responses = await responsesOf(db, tenant, surveyIds, externalIds);

  const answered = new Map<string, number>();
  for (const r of recipients) {
    const survey = surveys.get(r.survey_id);
    if (r.status === 'responded' && survey && privacyOf(survey) === 'anonymous')
      answered.set(r.survey_id, (answered.get(r.survey_id) ?? 0) + 1);
  }
  const notIdentifiable = [...answered].map(([surveyId, n]) => ({ surveyId, responses: n })).sort(bySurvey);

  const emails = new Set<string>();
  if (subject.kind === 'email') emails.add(canonical('email', subject.value));
  for (const r of respondents) if (r.email) emails.add(r.email.toLowerCase());
  for (const r of recipients) if (r.email) emails.add(r.email.toLowerCase());
  for (const u of scimUsers)
    for (const e of u.emails) if (typeof e.value === 'string') emails.add(e.value.toLowerCase());

  const person: Person = {
    externalIds: new Set(externalIds),
    responseIds: new Set(responses.map((r) => r.id)),
    texts: textsOf(responses, surveys),
  };
  const answeredSurveys = [...new Set(responses.map((r) => r.survey_id))].sort();
  const events = (
    await candidateEvents(db, tenant, {
      externalIds,
      responseIds: [...person.responseIds],
      surveyIds: answeredSurveys,
    })
  ).filter((event) => eventHolds(event, person));
  const deliveries = await deliveriesOf(
    db,
    tenant,
    events.map((e) => e.id),
  );
  const analyses = (await analysesOf(db, tenant, answeredSurveys)).filter((a) =>
    analysisHolds(a.result, a.survey_id, person),
  );
  const identifiers = { externalIds, emails: [...emails] };
  const accessFiles = (await storedAccessFiles(db, tenant, request.id))
    .filter((r) =>
      fingerprintMatches({ salt: r.subject_salt, kind: r.subject_kind, fingerprint: r.subject_hash }, identifiers),
    )
    .map((r) => r.id);

  return {
    person,
    externalIds,
    emails: [...emails].sort(),
    surveys,
    respondents,
    scimUsers,
    responses,
    notIdentifiable,
    recipients,
    analyticsCopies: await countAnalyticsCopies(db, tenant, responses),
    events,
    deliveries: deliveries.total,
    webhookRecipients: deliveries.recipients,
    exports: await exportFilesHolding(db, tenant, answeredSurveys, [...person.responseIds], externalIds),
    analyses,
    accessFiles,
    syncJobs: await syncJobsNaming(db, tenant, externalIds),
    unsubscribes: await unsubscribesOf(db, tenant, [...emails]),
  };
}

const bySurvey = (a: { surveyId: string }, b: { surveyId: string }) => a.surveyId.localeCompare(b.surveyId);

export function inventoryOf(h: Holdings): Inventory {
  const found = new Map<string, number>();
  for (const r of h.responses) found.set(r.survey_id, (found.get(r.survey_id) ?? 0) + 1);
  const responses: Inventory['responses'] = [
    ...[...found].map(([surveyId, n]) => ({
      surveyId,
      privacy: privacyOf(h.surveys.get(surveyId)!),
      responses: n,
      status: 'found' as const,
    })),
    ...h.notIdentifiable.map((n) => ({
      surveyId: n.surveyId,
      privacy: 'anonymous' as const,
      responses: n.responses,
      status: 'not_identifiable' as const,
    })),
  ].sort(bySurvey);
  return {
    respondents: h.respondents.length,
    scimUsers: h.scimUsers.length,
    responses,
    distributionRecipients: h.recipients.length,
    // Every recipient row carries a personal link (its token's hash), kiosk recipients a code too.
    personalLinks: h.recipients.length,
    kioskCodes: h.recipients.filter((r) => r.kiosk_code).length,
    events: h.events.length,
    webhookDeliveries: h.deliveries,
    exportFiles: h.exports.length,
    aiAnalyses: h.analyses.length,
    analyticsCopies: h.analyticsCopies,
    accessFiles: h.accessFiles.length,
    syncJobs: h.syncJobs.length,
    unsubscribes: h.unsubscribes.length,
  };
}

/** Export files holding one of the person's responses: those kept, and those deleted since the file was taken. */
async function exportFilesHolding(
  db: DbOrTx,
  tenant: Tenant,
  surveyIds: readonly string[],
  responseIds: readonly string[],
  externalIds: readonly string[],
): Promise<Awaited<ReturnType<typeof exportsHolding>>> {
  const found = await exportsHolding(db, tenant, surveyIds, responseIds);
  const known = new Set(found.map((e) => e.id));
  for (const e of await exportsHoldingDeletedOf(db, tenant, externalIds)) if (!known.has(e.id)) found.push(e);
  return found;
}
