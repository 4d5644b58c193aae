/**
 * Data-subject requests through HTTP, with the SDK: scopes, the access file (exactly the person's data, nothing
 * of anyone else), dry runs that equal real runs, and erasures that leave no trace of the person in any endpoint,
 * export, event, delivery, AI result or analytics figure (`identity_and_responses`: figures equal to an
 * organization that never had their responses), or keep their answers counted without them (`identity`).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetReleases } from '../analytics/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  ada,
  allOf,
  bob,
  buildTwin,
  buildWorld,
  comments,
  waitForRequest,
  type AccessFile,
  type Client,
  type PrivacyRequest,
  type World,
} from './fixtures.js';

let t: TestService;
let w: World;
let twin: { live: Client; identified: string };
/** Ada's first access request, whose file her erasure must delete. */
let adaAccessId: string;

beforeAll(async () => {
  t = await startTestService();
  w = await buildWorld(t);
  twin = await buildTwin(t);
}, 180_000);
afterAll(async () => {
  await w?.receiver.close();
  await t?.close();
});

async function create(body: Parameters<Client['privacy']['requests']['create']>[0]): Promise<PrivacyRequest> {
  const accepted = await w.live.privacy.requests.create(body);
  expect(accepted.status).toBe('pending');
  return waitForRequest(w.live, accepted.id);
}

async function download(id: string, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/api/v1/privacy-requests/${id}/download`, {
    headers: { Authorization: `Bearer ${w.key}`, ...headers },
  });
}

/** Static analytics as of a survey that has released nothing (figures, not the audit, are compared here). */
async function figures(client: Client, surveyId: string, query: Record<string, string> = {}) {
  await forgetReleases(t, surveyId);
  const result = await client.unwrap(
    client.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: surveyId }, query } }),
  );
  const { surveyId: _s, generatedAt: _g, invitedCount: _i, responseRate: _r, ...rest } = result;
  return rest;
}

const traces = (text: string, words: readonly string[]) => words.filter((word) => text.includes(word));

describe('scopes and checks', () => {
  it('needs privacy:write to create and privacy:read to read and download', async () => {
    const none = t.client((await t.createKey(w.organizationId, { scopes: ['respondents:*', 'responses:*'] })).key);
    const reader = t.client((await t.createKey(w.organizationId, { scopes: ['privacy:read'] })).key);
    const writer = t.client((await t.createKey(w.organizationId, { scopes: ['privacy:write'] })).key);
    const body = { type: 'access' as const, subject: { externalId: 'E-404' } };

    for (const client of [none, reader]) {
      const refused = await client.POST('/api/v1/privacy-requests', { body });
      expect(refused.response.status).toBe(403);
      expect(refused.error?.error.details?.[0]?.message).toContain('privacy:write');
    }
    const accepted = await writer.POST('/api/v1/privacy-requests', { body });
    expect(accepted.response.status).toBe(202);
    const id = accepted.data!.data.id;
    for (const client of [none, writer]) {
      const path = { params: { path: { id } } };
      expect((await client.GET('/api/v1/privacy-requests/{id}', path)).response.status).toBe(403);
      expect((await client.GET('/api/v1/privacy-requests')).response.status).toBe(403);
      const file = await client.GET('/api/v1/privacy-requests/{id}/download', { ...path, parseAs: 'stream' });
      expect(file.response.status).toBe(403);
    }
    const done = await waitForRequest(reader, id);
    expect(done.status).toBe('completed');
    // A person the service knows nothing of: an empty inventory, and a file that says so.
    expect(done.inventory).toMatchObject({ respondents: 0, responses: [], distributionRecipients: 0, events: 0 });
    expect(
      (await reader.GET('/api/v1/privacy-requests/{id}/download', { params: { path: { id } } })).response.status,
    ).toBe(200);
  });

  it('refuses an erasure without a scope and an access request with one, and hides other tenants', async () => {
    const erasure = await w.live.POST('/api/v1/privacy-requests', {
      body: { type: 'erasure', subject: { externalId: 'E-1' } },
    });
    expect(erasure.response.status).toBe(400);
    expect(erasure.error?.error.details).toEqual([expect.objectContaining({ path: '/body/scope', code: 'required' })]);
    const access = await w.live.POST('/api/v1/privacy-requests', {
      body: { type: 'access', subject: { email: ada.email }, scope: 'identity' },
    });
    expect(access.response.status).toBe(400);
    const neither = await w.live.POST('/api/v1/privacy-requests', {
      body: { type: 'access', subject: {} } as never,
    });
    expect(neither.response.status).toBe(400);

    const other = await t.createTenant();
    const mine = await w.live.privacy.requests.create({
      type: 'access',
      subject: { externalId: 'E-404' },
      dryRun: true,
    });
    const theirs = await t.client(other.liveKey).GET('/api/v1/privacy-requests/{id}', {
      params: { path: { id: mine.id } },
    });
    expect(theirs.response.status).toBe(404);
    await waitForRequest(w.live, mine.id);
  });
});

describe('access', () => {
  let byId: PrivacyRequest;
  let file: AccessFile;

  beforeAll(async () => {
    byId = await create({ type: 'access', subject: { externalId: ada.externalId } });
    adaAccessId = byId.id;
    const response = await download(byId.id);
    expect(response.status).toBe(200);
    file = (await response.json()) as AccessFile;
  });

  it('counts every kind of record, anonymous answers as not identifiable', () => {
    expect(byId.status).toBe('completed');
    expect(byId.inventory).toEqual({
      respondents: 1,
      scimUsers: 1,
      responses: [
        { surveyId: w.identified, privacy: 'identified', responses: 1, status: 'found' },
        { surveyId: w.confidential, privacy: 'confidential', responses: 1, status: 'found' },
        { surveyId: w.anonymous, privacy: 'anonymous', responses: 1, status: 'not_identifiable' },
      ].sort((a, b) => a.surveyId.localeCompare(b.surveyId)),
      distributionRecipients: 2,
      personalLinks: 2,
      kioskCodes: 0,
      // response.submitted (identified, confidential), the sync's result, the AI result listing her response.
      events: 4,
      webhookDeliveries: 4,
      exportFiles: 1,
      aiAnalyses: 1,
      analyticsCopies: 2,
      accessFiles: 0,
      syncJobs: 1,
      unsubscribes: 0,
    });
    expect(byId.webhookRecipients).toEqual([{ webhookId: w.webhookId, url: w.receiver.url, deliveries: 4 }]);
  });

  it('gives a file of exactly her data, with the questions, and nothing of anyone else', async () => {
    expect(file.requestId).toBe(byId.id);
    expect(file.respondents).toEqual([
      expect.objectContaining({ externalId: 'E-1', email: ada.email, firstName: 'Ada', department: 'Engineering' }),
    ]);
    expect(file.scimUsers).toEqual([expect.objectContaining({ externalId: 'E-1', userName: ada.email })]);
    expect(file.responses.map((r) => [r.surveyId, r.responseId, r.privacy])).toEqual([
      [w.identified, w.responses.identified.get('E-1'), 'identified'],
      [w.confidential, w.responses.confidential.get('E-1'), 'confidential'],
    ]);
    expect(file.responses[0]!.answers).toEqual([
      { questionId: 'q_1', questionText: 'How likely are you to recommend working here?', type: 'nps', value: 0 },
      { questionId: 'q_2', questionText: 'My workload is manageable', type: 'rating', value: 1 },
      {
        questionId: 'q_3',
        questionText: 'Where do you work most days?',
        type: 'single_choice',
        value: 'c_1',
        labels: ['Office'],
      },
      { questionId: 'q_4', questionText: 'What would you change?', type: 'text', value: comments['E-1'] },
    ]);
    expect(file.notIdentifiable).toEqual([{ surveyId: w.anonymous, surveyTitle: 'Anonymous check-in', responses: 1 }]);
    expect(file.distributions.map((d) => [d.surveyId, d.method, d.status, d.personalLink])).toEqual(
      expect.arrayContaining([
        [w.identified, 'link', 'responded', true],
        [w.anonymous, 'link', 'responded', true],
      ]),
    );
    expect(file.webhookRecipients).toEqual(byId.webhookRecipients);

    const text = JSON.stringify(file);
    // Nobody else's id, address, name or words; no link or token.
    const others = ['E-2', 'E-3', 'E-8', bob.email, 'Bob', 'Stone', comments['E-2']!, comments['E-3']!];
    expect(traces(text, others)).toEqual([]);
    expect(text).not.toMatch(/\/s\/|token|accessCode/);
    expect(text).not.toContain('Anonymous words of Ada');
  });

  it('serves the file in ranges, like export files', async () => {
    const whole = Buffer.from(await (await download(byId.id)).arrayBuffer());
    const part = await download(byId.id, { Range: 'bytes=10-29' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-29/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(10, 30));
    const tail = await download(byId.id, { Range: 'bytes=-5', 'If-Range': part.headers.get('etag')! });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(whole.subarray(whole.length - 5));
    expect((await download(byId.id, { Range: `bytes=${whole.length}-` })).status).toBe(416);
  });

  it('keeps no personal data in the request once it is done', async () => {
    const shown = JSON.stringify(await w.live.privacy.requests.get(byId.id));
    expect(traces(shown, ['E-1', ada.email, 'Ada'])).toEqual([]);
    const listed = await allOf(w.live.privacy.requests.listAll({ type: 'access' }));
    expect(listed).toContain(byId.id);
    expect(traces(listed, ['E-1', ada.email])).toEqual([]);
    const row = await t.db
      .selectFrom('privacy_requests')
      .select(['subject_value', 'subject_hash'])
      .where('id', '=', byId.id)
      .executeTakeFirstOrThrow();
    expect(row.subject_value).toBeNull();
    expect(row.subject_hash).toBe(byId.subject.fingerprint);
    const event = await t.db
      .selectFrom('events')
      .select('data')
      .where('organization_id', '=', w.organizationId)
      .where('type', '=', 'privacy_request.completed')
      .where(sql<string>`data ->> 'id'`, '=', byId.id)
      .executeTakeFirstOrThrow();
    expect(traces(JSON.stringify(event.data), ['E-1', ada.email, 'Ada'])).toEqual([]);
  });

  it('sees her in every copy an erasure must reach (so that their absence later means something)', async () => {
    const her = ['E-1', 'quarterly planning marathon', w.responses.identified.get('E-1')!];
    expect(traces(await allOf(w.live.events.listAll({ pageSize: 100 })), her)).toEqual(her);
    // The endpoint echoes each payload, so the deliveries' excerpts hold her data too.
    expect(traces(await allOf(w.live.webhooks.deliveries.listAll(w.webhookId, { pageSize: 100 })), her)).toEqual(her);
    expect(JSON.stringify(await w.live.analytics.ai.get(w.identified, w.analysisId))).toContain(
      w.responses.identified.get('E-1')!,
    );
    const csv = await (await w.live.exports.download(w.exportId)).text();
    expect(traces(csv, ['E-1', 'quarterly planning marathon'])).toEqual(['E-1', 'quarterly planning marathon']);
  });

  it('finds the same person by e-mail address', async () => {
    const byEmail = await create({ type: 'access', subject: { email: ada.email.toUpperCase() } });
    // The file of the first request is now one more copy of her data.
    expect(byEmail.inventory).toEqual({ ...byId.inventory, accessFiles: 1 });
    expect(byEmail.subject.kind).toBe('email');
    expect(byEmail.subject.fingerprint).not.toBe(byId.subject.fingerprint);
  });
});

describe('erasure of identity and responses', () => {
  let before: Awaited<ReturnType<typeof figures>>;
  let dry: PrivacyRequest;
  let real: PrivacyRequest;

  beforeAll(async () => {
    before = await figures(w.live, w.identified);
    dry = await create({
      type: 'erasure',
      subject: { externalId: ada.externalId },
      scope: 'identity_and_responses',
      dryRun: true,
    });
    real = await create({ type: 'erasure', subject: { externalId: ada.externalId }, scope: 'identity_and_responses' });
  });

  it('reports the same inventory in the dry run as in the real run, and the dry run changes nothing', async () => {
    expect(dry.status).toBe('completed');
    expect(real.status).toBe('completed');
    expect(dry.inventory).toEqual(real.inventory);
    expect(dry.webhookRecipients).toEqual(real.webhookRecipients);
    expect(real.inventory).toMatchObject({ respondents: 1, accessFiles: 2, exportFiles: 1, events: 4 });
    expect(real.webhookRecipients.map((r) => r.webhookId)).toEqual([w.webhookId]);
    expect(real.downloadUrl).toBeNull();
  });

  it('leaves no respondent, SCIM user, response or invitation of hers', async () => {
    const respondent = await w.live.GET('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-1' } },
    });
    expect(respondent.response.status).toBe(404);
    const users = await w.live.GET('/scim/v2/Users', { params: { query: { filter: 'externalId eq "E-1"' } } });
    expect((users.data as { totalResults: number }).totalResults).toBe(0);
    for (const surveyId of [w.identified, w.confidential]) {
      const listed = await allOf(w.live.responses.listAll(surveyId, { pageSize: 100 }));
      expect(traces(listed, ['E-1', comments['E-1']!, w.responses.confidential.get('E-1')!])).toEqual([]);
    }
    const recipients = await t.db
      .selectFrom('distribution_recipients')
      .select('external_id')
      .where('organization_id', '=', w.organizationId)
      .where('external_id', '=', 'E-1')
      .execute();
    expect(recipients).toEqual([]);
    // Her anonymous answer cannot be told apart from others': it stays (reported not_identifiable).
    const anonymous = await w.live.surveys.get(w.anonymous);
    expect(anonymous.responseCount).toBe(2);
  });

  it('leaves nothing of her in events, webhook deliveries or the sync job', async () => {
    const herMarks = ['E-1', ada.email, 'quarterly planning marathon', w.responses.identified.get('E-1')!];
    const events = await allOf(w.live.events.listAll({ pageSize: 100 }));
    expect(traces(events, herMarks)).toEqual([]);
    expect(events).toContain('privacy_request.completed');
    const deliveries = await allOf(w.live.webhooks.deliveries.listAll(w.webhookId, { pageSize: 100 }));
    expect(traces(deliveries, herMarks)).toEqual([]);
    const jobs = await t.db
      .selectFrom('sync_jobs')
      .select('errors')
      .where('organization_id', '=', w.organizationId)
      .execute();
    expect(traces(JSON.stringify(jobs), ['E-1'])).toEqual([]);
  });

  it('deletes the export files and the access files that held her; exports made now leave her out', async () => {
    const old = await w.live.GET('/api/v1/exports/{exportId}/download', {
      params: { path: { exportId: w.exportId } },
      parseAs: 'stream',
    });
    expect(old.response.status).toBe(410);
    expect((old.error as { error: { code: string } }).error.code).toBe('export_erased');
    const access = await download(adaAccessId);
    expect(access.status).toBe(410);
    expect(((await access.json()) as { error: { code: string } }).error.code).toBe('export_erased');

    const again = await w.live.unwrap(
      w.live.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: w.identified } },
        body: { format: 'csv' },
      }),
    );
    const done = await w.live.exports.wait(again.id, { initialDelayMs: 50, timeoutMs: 60_000 });
    const csv = await (await w.live.exports.download(done.id)).text();
    expect(traces(csv, ['E-1', 'quarterly planning marathon'])).toEqual([]);
    expect(csv).toContain('E-2');
  });

  it('removes her from AI results', async () => {
    const analysis = await w.live.analytics.ai.get(w.identified, w.analysisId);
    const text = JSON.stringify(analysis);
    expect(traces(text, [w.responses.identified.get('E-1')!, 'quarterly planning marathon', 'marathon'])).toEqual([]);
    expect(analysis.responseSentiments.length).toBe(7);
  });

  it('gives every figure as if her responses never were', async () => {
    const after = await figures(w.live, w.identified);
    expect(after.responseCount).toBe(before.responseCount - 1);
    expect(after).toEqual(await figures(twin.live, twin.identified));
    expect(await figures(w.live, w.identified, { segmentBy: 'department' })).toEqual(
      await figures(twin.live, twin.identified, { segmentBy: 'department' }),
    );
    expect((await w.live.surveys.get(w.identified)).responseCount).toBe(7);
    expect((await w.live.surveys.get(w.confidential)).responseCount).toBe(5);
  });
});

describe('erasure of identity only', () => {
  it('keeps his responses, counted, without him', async () => {
    const before = await figures(w.live, w.identified);
    const bySegment = await figures(w.live, w.identified, { segmentBy: 'department' });
    const erased = await create({ type: 'erasure', subject: { email: bob.email }, scope: 'identity' });
    expect(erased.status).toBe('completed');
    expect(erased.inventory).toMatchObject({ respondents: 1, scimUsers: 1, analyticsCopies: 2 });

    expect(await figures(w.live, w.identified)).toEqual(before);
    expect(await figures(w.live, w.identified, { segmentBy: 'department' })).toEqual(bySegment);
    expect((await w.live.surveys.get(w.identified)).responseCount).toBe(7);

    const kept = await w.live.responses.get(w.identified, w.responses.identified.get('E-2')!);
    expect(kept.respondentExternalId).toBeNull();
    expect(kept.answers).toEqual(expect.arrayContaining([{ questionId: 'q_4', value: comments['E-2'] }]));
    const respondent = await w.live.GET('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-2' } },
    });
    expect(respondent.response.status).toBe(404);
    const events = await allOf(w.live.events.listAll({ pageSize: 100 }));
    expect(traces(events, ['E-2', bob.email])).toEqual([]);
    const copies = await t.db
      .selectFrom('analytics_responses')
      .select(['respondent_external_id'])
      .where('organization_id', '=', w.organizationId)
      .where('response_id', 'in', [w.responses.identified.get('E-2')!, w.responses.confidential.get('E-2')!])
      .execute();
    // Not his id: one opaque key for both (his responses still count as one respondent).
    const keys = copies.map((c) => c.respondent_external_id);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^~[0-9a-f]{24}$/);
    expect(keys[1]).toBe(keys[0]);
    const subjects = await t.db
      .selectFrom('analytics_responses')
      .select(['external_id'])
      .where('organization_id', '=', w.organizationId)
      .where('external_id', '=', 'E-2')
      .execute();
    expect(subjects).toEqual([]);
  });
});
