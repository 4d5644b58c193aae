/**
 * Retention through HTTP: the policy (scopes, checks, defaults, holds kept across changes, audit entries), the
 * preview, and runs of the daily job — responses deleted or anonymized after their age, survey exceptions and legal
 * holds respected, export files holding removed responses deleted, events and deliveries after their own durations —
 * with the preview's counts equal to what the run then reports, and every other view (responses, counts, analytics,
 * exports, recipients, the audit log) showing exactly what the run did. Ages are made by moving timestamps back.
 */
import { sql } from 'kysely';
import type { components } from '@survey-service/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRetentionRuns } from '../../server/src/modules/retention/index.js';
import { forgetReleases } from '../analytics/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { eventually } from '../helpers/eventually.js';
import { answersOf, everyone, questions, type Client } from './fixtures.js';
import { age, answeredSurvey, org } from './retention-fixtures.js';

type RetentionSettingsUpdate = components['schemas']['RetentionSettingsUpdate'];
type RetentionRun = components['schemas']['RetentionRun'];

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/** Starts today's runs and waits for this organization's to complete. */
async function runNow(live: Client): Promise<RetentionRun> {
  await startRetentionRuns(t.service.deps);
  return eventually(
    async () => {
      const { lastRun } = await live.privacy.retention.get();
      return lastRun?.status === 'completed' ? lastRun : undefined;
    },
    30_000,
    'the retention run',
  );
}

async function figures(live: Client, surveyId: string, query: Record<string, string> = {}) {
  await forgetReleases(t, surveyId);
  const result = await live.unwrap(
    live.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: surveyId }, query } }),
  );
  const { generatedAt: _g, ...rest } = result;
  return rest;
}

const responseIdsOf = async (live: Client, surveyId: string) =>
  (await live.unwrap(live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }))).map(
    (r) => r.id,
  );

describe('the policy', () => {
  it('starts at the defaults, needs privacy:read to read and privacy:write to change', async () => {
    const o = await org(t);
    expect(await o.live.privacy.retention.get()).toEqual({
      responses: null,
      exportFiles: { afterDays: 7 },
      events: { afterDays: 30 },
      webhookDeliveries: { afterDays: 30 },
      surveyExceptions: [],
      legalHolds: [],
      updatedAt: null,
      lastRun: null,
    });
    const reader = t.client((await t.createKey(o.organizationId, { scopes: ['privacy:read'] })).key);
    expect((await reader.GET('/api/v1/settings/retention')).response.status).toBe(200);
    expect((await reader.GET('/api/v1/settings/retention/preview')).response.status).toBe(200);
    const refused = await reader.PUT('/api/v1/settings/retention', { body: {} });
    expect(refused.response.status).toBe(403);
    const other = t.client((await t.createKey(o.organizationId, { scopes: ['surveys:read'] })).key);
    expect((await other.GET('/api/v1/settings/retention')).response.status).toBe(403);
  });

  it('refuses what it cannot apply, naming each field', async () => {
    const o = await org(t);
    const survey = await o.live.unwrap(o.live.POST('/api/v1/surveys', { body: { title: 'Kept', questions } }));
    const refusal = async (body: unknown) => {
      const answer = await o.live.PUT('/api/v1/settings/retention', { body: body as RetentionSettingsUpdate });
      expect(answer.response.status).toBe(400);
      return (answer.error as { error: { details: { path: string }[] } }).error.details.map((d) => d.path);
    };
    expect(await refusal({ responses: { afterDays: 29, basis: 'submission', action: 'delete' } })).toContain(
      '/body/responses/afterDays',
    );
    expect(await refusal({ exportFiles: { afterDays: 8 } })).toEqual(['/body/exportFiles/afterDays']);
    expect(await refusal({ events: { afterDays: '7' } })).toEqual(['/body/events/afterDays']);
    expect(
      await refusal({
        surveyExceptions: [
          { surveyId: survey.id, responses: null },
          { surveyId: survey.id, responses: null },
        ],
      }),
    ).toEqual(['/body/surveyExceptions/1/surveyId']);
    expect(await refusal({ legalHolds: [{ surveyId: 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8', reason: 'Case 1' }] })).toEqual([
      '/body/legalHolds/0/surveyId',
    ]);
    expect((await o.live.privacy.retention.get()).updatedAt).toBeNull();
  });

  it('keeps a hold’s placing time while it stands, and audits each change once', async () => {
    const o = await org(t);
    const survey = await o.live.unwrap(o.live.POST('/api/v1/surveys', { body: { title: 'Held', questions } }));
    const policy: RetentionSettingsUpdate = {
      responses: { afterDays: 730, basis: 'submission', action: 'anonymize' },
      legalHolds: [{ surveyId: survey.id, reason: 'Case 2026-114' }],
    };
    const first = await o.live.privacy.retention.update(policy);
    expect(first.responses).toEqual(policy.responses);
    const placedAt = first.legalHolds[0]!.placedAt;
    expect(placedAt).toBeTruthy();
    const again = await o.live.privacy.retention.update(policy);
    expect(again.legalHolds[0]!.placedAt).toBe(placedAt);
    expect(again.updatedAt).toBe(first.updatedAt);
    const widened = await o.live.privacy.retention.update({
      ...policy,
      legalHolds: [...policy.legalHolds!, { surveyId: null, reason: 'Litigation hold, all data' }],
    });
    expect(widened.legalHolds.map((h) => h.placedAt === placedAt)).toEqual([true, false]);
    const entries = await o.live.auditLog.list({ action: 'settings.updated' });
    expect(entries.map((e) => e.target)).toEqual([
      { type: 'settings', id: 'retention' },
      { type: 'settings', id: 'retention' },
    ]);
  });
});

// Each test submits and exports through the API: on a loaded Citus cluster that takes tens of seconds.
describe('a run', { timeout: 180_000 }, () => {
  it('deletes responses past their age as a deletion does, with the files holding them; the preview said so', async () => {
    const o = await org(t);
    const survey = await answeredSurvey(o.live, 'Deleted after a year');
    const old = survey.responseIds.slice(0, 3);
    await age(t, o.organizationId, old, 400);
    const exported = await o.live.unwrap(
      o.live.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: survey.id } },
        body: { format: 'csv' },
      }),
    );
    expect((await o.live.exports.wait(exported.id, { initialDelayMs: 50, timeoutMs: 60_000 })).status).toBe(
      'completed',
    );
    // An event past a week, with the policy's events at 7 days.
    const [oldEvent] = (await o.live.events.list({ type: 'response.submitted', pageSize: 1 })) as { id: string }[];
    await sql`update events set created_at = now() - interval '8 days'
      where organization_id = ${o.organizationId} and id = ${oldEvent!.id}`.execute(t.db);
    await o.live.privacy.retention.update({
      responses: { afterDays: 365, basis: 'submission', action: 'delete' },
      events: { afterDays: 7 },
    });

    const { wouldRemove } = await o.live.privacy.retention.preview();
    expect(wouldRemove).toEqual({
      deletedResponses: 3,
      anonymizedResponses: 0,
      heldResponses: 0,
      surveys: [{ surveyId: survey.id, deletedResponses: 3, anonymizedResponses: 0, heldResponses: 0 }],
      exportFiles: 1,
      events: 1,
      webhookDeliveries: 0,
    });
    const run = await runNow(o.live);
    expect(run.removed).toEqual(wouldRemove);

    expect(await responseIdsOf(o.live, survey.id)).toEqual(expect.arrayContaining(survey.responseIds.slice(3)));
    expect(await responseIdsOf(o.live, survey.id)).toHaveLength(5);
    expect((await o.live.surveys.get(survey.id)).responseCount).toBe(5);
    expect((await figures(o.live, survey.id)).responseCount).toBe(5);
    const download = await o.live.GET('/api/v1/exports/{exportId}/download', {
      params: { path: { exportId: exported.id } },
      parseAs: 'text',
    });
    expect(download.response.status).toBe(410);
    expect((download.error as { error: { code: string } }).error.code).toBe('export_erased');
    expect((await o.live.events.list({ pageSize: 100 })).map((e) => e.id)).not.toContain(oldEvent!.id);
    // An export made now leaves them out and lists them as deleted, as after a deleteResponse.
    const again = await o.live.unwrap(
      o.live.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: survey.id } },
        body: { format: 'json' },
      }),
    );
    const redone = await o.live.exports.wait(again.id, { initialDelayMs: 50, timeoutMs: 60_000 });
    expect(redone.rowCount).toBe(5);
    const deletions = await o.live.unwrap(
      o.live.GET('/api/v1/exports/{exportId}/deletions', { params: { path: { exportId: again.id } } }),
    );
    expect(deletions.map((d) => d.responseId).sort()).toEqual([...old].sort());

    // Nothing is left to do: a second preview is empty, and the run is in the audit log as the service's own.
    const after = (await o.live.privacy.retention.preview()).wouldRemove;
    expect([after.deletedResponses, after.exportFiles, after.events]).toEqual([0, 0, 0]);
    const [entry] = await o.live.auditLog.list({ action: 'retention.run' });
    expect(entry).toMatchObject({
      actor: { type: 'system', keyId: null, name: null },
      target: { type: 'retention_run', id: run.id },
      requestId: null,
    });
  });

  it('anonymizes: answers kept and counted, the person forgotten; exceptions and holds respected', async () => {
    const o = await org(t);
    const anonymized = await answeredSurvey(o.live, 'Anonymized after a year');
    const excepted = await answeredSurvey(o.live, 'Kept by an exception');
    const held = await answeredSurvey(o.live, 'Held');
    for (const s of [anonymized, excepted, held]) await age(t, o.organizationId, s.responseIds.slice(0, 4), 400);
    const before = await figures(o.live, anonymized.id, { segmentBy: 'department' });
    await o.live.privacy.retention.update({
      responses: { afterDays: 365, basis: 'submission', action: 'anonymize' },
      surveyExceptions: [{ surveyId: excepted.id, responses: null }],
      legalHolds: [{ surveyId: held.id, reason: 'Case 7' }],
    });
    const { wouldRemove } = await o.live.privacy.retention.preview();
    expect(wouldRemove).toMatchObject({ deletedResponses: 0, anonymizedResponses: 4, heldResponses: 4 });
    expect(wouldRemove.surveys.map((s) => s.surveyId).sort()).toEqual([anonymized.id, held.id].sort());
    const run = await runNow(o.live);
    expect(run.removed).toEqual(wouldRemove);

    const responses = await o.live.unwrap(
      o.live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: anonymized.id } } }),
    );
    const byId = new Map(responses.map((r) => [r.id, r.respondentExternalId]));
    expect(anonymized.responseIds.map((id) => byId.get(id))).toEqual([
      null,
      null,
      null,
      null,
      ...everyone.slice(4).map((p) => p.externalId),
    ]);
    // Still counted, in every breakdown: the segment fields stay, as for an erasure of identity.
    expect(await figures(o.live, anonymized.id, { segmentBy: 'department' })).toEqual(before);
    for (const s of [excepted, held]) {
      const kept = await o.live.unwrap(
        o.live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: s.id } } }),
      );
      expect(kept.every((r) => r.respondentExternalId !== null)).toBe(true);
    }
    expect((await o.live.privacy.retention.preview()).wouldRemove).toMatchObject({
      anonymizedResponses: 0,
      heldResponses: 4,
    });
  });

  it('anonymizes person by person, so nobody counts as both a known and a forgotten respondent', async () => {
    const o = await org(t);
    const survey = await o.live.unwrap(
      o.live.POST('/api/v1/surveys', {
        body: { title: 'Several answers each', questions, settings: { allowMultipleResponses: true } },
      }),
    );
    await o.live.unwrap(o.live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
    const answer = async (person: (typeof everyone)[number], i: number) =>
      (
        await o.live.unwrap(
          o.live.POST('/api/v1/surveys/{id}/responses', {
            params: { path: { id: survey.id } },
            body: { respondentExternalId: person.externalId, answers: answersOf(person, i) },
          }),
        )
      ).id;
    // Ada: two old answers. Bob: an old one and a new one. Two respondents, under the threshold of 3.
    await o.live.unwrap(o.live.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 3 } }));
    const adaOld = [await answer(everyone[0]!, 0), await answer(everyone[0]!, 1)];
    const bobOld = await answer(everyone[1]!, 2);
    await answer(everyone[1]!, 3);
    await age(t, o.organizationId, [...adaOld, bobOld], 400);
    const before = await figures(o.live, survey.id);
    expect(before.suppressed).toBe(true);
    await o.live.privacy.retention.update({ responses: { afterDays: 365, basis: 'submission', action: 'anonymize' } });
    const { wouldRemove } = await o.live.privacy.retention.preview();
    expect(wouldRemove.anonymizedResponses).toBe(2);
    expect((await runNow(o.live)).removed).toEqual(wouldRemove);
    const listed = await o.live.unwrap(
      o.live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: survey.id } } }),
    );
    const anonymous = listed.filter((r) => r.respondentExternalId === null).map((r) => r.id);
    expect(anonymous.sort()).toEqual([...adaOld].sort());
    // Still two respondents, still suppressed: Ada's two answers count as one, and Bob's old one is not due while
    // his latest is new (anonymized alone, he would count twice and the result would show).
    expect(await figures(o.live, survey.id)).toEqual(before);
  });

  it('removes nothing under a hold on the whole environment', async () => {
    const o = await org(t);
    const survey = await answeredSurvey(o.live, 'Under a litigation hold');
    await age(t, o.organizationId, survey.responseIds, 400);
    await o.live.privacy.retention.update({
      responses: { afterDays: 30, basis: 'submission', action: 'delete' },
      exportFiles: { afterDays: 1 },
      webhookDeliveries: { afterDays: 1 },
      events: { afterDays: 1 },
      legalHolds: [{ surveyId: null, reason: 'Litigation hold' }],
    });
    await sql`update events set created_at = now() - interval '2 days' where organization_id = ${o.organizationId}`.execute(
      t.db,
    );
    const { wouldRemove } = await o.live.privacy.retention.preview();
    expect(wouldRemove).toEqual({
      deletedResponses: 0,
      anonymizedResponses: 0,
      heldResponses: 8,
      surveys: [{ surveyId: survey.id, deletedResponses: 0, anonymizedResponses: 0, heldResponses: 8 }],
      exportFiles: 0,
      events: 0,
      webhookDeliveries: 0,
    });
    expect((await runNow(o.live)).removed).toEqual(wouldRemove);
    expect(await responseIdsOf(o.live, survey.id)).toHaveLength(8);
    expect((await o.live.events.list({ pageSize: 100 })).length).toBeGreaterThan(0);
  });

  it('counts from the survey’s close when asked, and starts one run a day', async () => {
    const o = await org(t);
    const closed = await answeredSurvey(o.live, 'Closed long ago');
    const open = await answeredSurvey(o.live, 'Still open');
    await o.live.unwrap(o.live.POST('/api/v1/surveys/{id}/close', { params: { path: { id: closed.id } } }));
    await sql`update surveys set closed_at = now() - interval '100 days'
      where organization_id = ${o.organizationId} and id = ${closed.id}`.execute(t.db);
    await age(t, o.organizationId, open.responseIds, 400);
    await o.live.privacy.retention.update({ responses: { afterDays: 90, basis: 'survey_close', action: 'delete' } });
    const { wouldRemove } = await o.live.privacy.retention.preview();
    expect(wouldRemove.surveys).toEqual([
      { surveyId: closed.id, deletedResponses: 8, anonymizedResponses: 0, heldResponses: 0 },
    ]);
    const run = await runNow(o.live);
    expect(run.removed).toEqual(wouldRemove);
    expect(await responseIdsOf(o.live, closed.id)).toEqual([]);
    expect(await responseIdsOf(o.live, open.id)).toHaveLength(8);
    // Today's run is done: the daily job, run again today, starts no second one here.
    await startRetentionRuns(t.service.deps);
    expect((await o.live.privacy.retention.get()).lastRun?.id).toBe(run.id);
  });
});
