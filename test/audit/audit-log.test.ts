/**
 * The audit log through HTTP: an entry for every read that showed identified data and every audited change, none
 * for anonymous reads or changes that changed nothing; paging by cursor both ways, filters, scope, tenants; and the
 * table itself refusing UPDATE, DELETE and TRUNCATE while letting a year-old entry and an organization's go.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteExpiredEntries } from '../../server/src/modules/audit/repository.js';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

type Client = ReturnType<TestService['client']>;
type Entry = Awaited<ReturnType<Client['auditLog']['list']>>[number];

const questions = [{ type: 'nps' as const, text: 'How likely are you to recommend working here?' }];

async function launched(client: Client, privacy: 'identified' | 'confidential' | 'anonymous'): Promise<string> {
  const survey = await client.surveys.create({ title: `A ${privacy} survey`, questions, settings: { privacy } });
  await client.surveys.launch(survey.id);
  return survey.id;
}

async function answer(client: Client, surveyId: string, externalId: string): Promise<string> {
  const response = await client.responses.submit(surveyId, {
    respondentExternalId: externalId,
    answers: [{ questionId: 'q_1', value: 9 }],
  });
  return response.id;
}

/** Every entry of the tenant, oldest first. */
async function entries(client: Client): Promise<Entry[]> {
  const all: Entry[] = [];
  for await (const entry of client.auditLog.listAll({ order: 'oldest' })) all.push(entry);
  return all;
}

/** What `act` added to the log. */
async function added(client: Client, act: () => Promise<unknown>): Promise<Entry[]> {
  const before = (await entries(client)).length;
  await act();
  return (await entries(client)).slice(before);
}

const summary = (list: Entry[]) => list.map((e) => `${e.action} ${e.target.type}:${e.target.id ?? '-'}`);

describe('reads of identified data', () => {
  it('writes an entry for each read that showed someone, and none for anonymous or empty reads', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    const me = await client.account.me();
    expect(await entries(client)).toEqual([]);
    // An empty list of respondents shows nobody.
    expect(summary(await added(client, () => client.respondents.list()))).toEqual([]);
    await client.respondents.upsert('E-1', { email: 'ada@example.com', firstName: 'Ada' });
    await client.respondents.upsert('E-2', { email: 'bob@example.com', firstName: 'Bob' });
    const identified = await launched(client, 'identified');
    const confidential = await launched(client, 'confidential');
    const anonymous = await launched(client, 'anonymous');
    const responseId = await answer(client, identified, 'E-1');
    const confidentialId = await answer(client, confidential, 'E-1');
    const anonymousId = await answer(client, anonymous, 'E-2');
    // Writing people, surveys and answers is not reading them.
    expect(await entries(client)).toEqual([]);

    expect(summary(await added(client, () => client.responses.list(identified)))).toEqual([
      `responses.read survey:${identified}`,
    ]);
    expect(summary(await added(client, () => client.responses.get(identified, responseId)))).toEqual([
      `responses.read response:${responseId}`,
    ]);
    expect(
      summary(
        await added(client, async () => {
          await client.responses.list(confidential);
          await client.responses.get(confidential, confidentialId);
          await client.responses.list(anonymous);
          await client.responses.get(anonymous, anonymousId);
          await client.analytics.static(identified);
        }),
      ),
    ).toEqual([]);
    expect(summary(await added(client, () => client.respondents.list()))).toEqual(['respondents.read respondents:-']);
    expect(summary(await added(client, () => client.respondents.get('E-2')))).toEqual([
      'respondents.read respondent:E-2',
    ]);
    // A read that failed showed nothing.
    expect(
      summary(await added(client, () => client.respondents.get('E-404').catch((error: unknown) => error))),
    ).toEqual([]);

    // Who, through which request, from where.
    const response = await client.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: identified } } });
    const [entry] = (await entries(client)).slice(-1);
    expect(entry).toMatchObject({
      action: 'responses.read',
      actor: { type: 'key', keyId: me.apiKey.id, name: me.apiKey.name },
      requestId: response.response.headers.get('x-request-id'),
      clientAddress: '127.0.0.1',
    });
    expect(entry!.id).toMatch(/^aud_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Date.parse(entry!.occurredAt)).toBeLessThanOrEqual(Date.now());

    // Another organization, and the other environment, see none of it.
    const other = await t.createTenant();
    expect(await entries(t.client(other.liveKey))).toEqual([]);
    const testKey = (await t.createKey(organizationId, { environment: 'TEST', scopes: ['*'] })).key;
    expect(await entries(t.client(testKey))).toEqual([]);
  });

  it('records reads of a distribution’s recipients and of a preview’s sample of people', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const surveyId = await launched(client, 'anonymous');
    // Nobody yet: the preview's sample and the recipients list show nobody.
    const nobody = { targeting: { filters: [] } };
    expect(summary(await added(client, () => client.distributions.preview(surveyId, nobody)))).toEqual([]);
    await client.respondents.upsert('E-1', { email: 'ada@example.com' });
    expect(summary(await added(client, () => client.distributions.preview(surveyId, nobody)))).toEqual([
      'respondents.read respondents:-',
    ]);
    const distribution = await client.distributions.create(surveyId, {
      targeting: { filters: [] },
      distribution: { method: 'link' },
    });
    await client.distributions.wait(surveyId, distribution.id, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(await entries(client)).toHaveLength(1);
    expect(summary(await added(client, () => client.distributions.recipients.list(surveyId, distribution.id)))).toEqual(
      [`recipients.read distribution:${distribution.id}`],
    );
    const csv = await added(client, async () =>
      (await client.distributions.recipients.download(surveyId, distribution.id)).text(),
    );
    expect(summary(csv)).toEqual([`recipients.read distribution:${distribution.id}`]);
    // A filter that leaves nobody shows nobody.
    expect(
      summary(
        await added(client, () =>
          client.distributions.recipients.list(surveyId, distribution.id, { status: 'bounced' }),
        ),
      ),
    ).toEqual([]);
  });

  it('records export and access file downloads and SCIM lookups', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await client.respondents.upsert('E-1', { email: 'ada@example.com' });
    const identified = await launched(client, 'identified');
    await answer(client, identified, 'E-1');
    const started = await client.exports.create(identified, { format: 'csv' });
    const done = await client.exports.wait(started.id, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(summary(await added(client, async () => (await client.exports.download(done.id)).text()))).toEqual([
      `export.downloaded export:${done.id}`,
    ]);

    const request = await client.privacy.requests.create({ type: 'access', subject: { externalId: 'E-1' } });
    await client.privacy.requests.wait(request.id, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(
      summary(await added(client, async () => (await client.privacy.requests.download(request.id)).text())),
    ).toEqual([`privacy_request.downloaded privacy_request:${request.id}`]);

    const scimKey = (await t.createKey(organizationId, { scopes: ['scim'] })).key;
    const scim = (path: string) =>
      fetch(`${t.url}/scim/v2${path}`, { headers: { authorization: `Bearer ${scimKey}` } }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { Resources?: { id: string }[] },
      }));
    const found = await scim('/Users?filter=' + encodeURIComponent('externalId eq "E-1"'));
    const userId = found.body.Resources![0]!.id;
    expect(summary(await added(client, () => scim(`/Users/${userId}`)))).toEqual([
      `scim_users.read scim_user:${userId}`,
    ]);
    const nobody = await added(client, () => scim('/Users?filter=' + encodeURIComponent('externalId eq "E-9"')));
    expect(summary(nobody)).toEqual([]);
    const log = summary(await entries(client));
    expect(log.filter((e) => e === 'scim_users.read scim_users:-')).toHaveLength(1);
  });
});

describe('a random sequence of reads', () => {
  it('gives exactly one entry per read that showed someone, in order, and none for the others', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    for (const id of ['E-1', 'E-2', 'E-3']) await client.respondents.upsert(id, { email: `${id}@example.com` });
    const identified = await launched(client, 'identified');
    const confidential = await launched(client, 'confidential');
    const anonymous = await launched(client, 'anonymous');
    const answered = await answer(client, identified, 'E-1');
    const hidden = await answer(client, confidential, 'E-2');
    await answer(client, anonymous, 'E-3');
    const emptySurvey = await launched(client, 'identified');

    // Each read, and the entry it must write (null: none).
    const reads: Record<string, { read: () => Promise<unknown>; entry: string | null }> = {
      identifiedList: { read: () => client.responses.list(identified), entry: `responses.read survey:${identified}` },
      identifiedGet: {
        read: () => client.responses.get(identified, answered),
        entry: `responses.read response:${answered}`,
      },
      emptyIdentifiedList: { read: () => client.responses.list(emptySurvey), entry: null },
      confidentialList: { read: () => client.responses.list(confidential), entry: null },
      confidentialGet: { read: () => client.responses.get(confidential, hidden), entry: null },
      anonymousList: { read: () => client.responses.list(anonymous), entry: null },
      analytics: { read: () => client.analytics.static(identified), entry: null },
      respondentsList: { read: () => client.respondents.list(), entry: 'respondents.read respondents:-' },
      respondentsNone: { read: () => client.respondents.list({ department: 'Nowhere' }), entry: null },
      respondentGet: { read: () => client.respondents.get('E-2'), entry: 'respondents.read respondent:E-2' },
      unknownRespondent: { read: () => client.respondents.get('E-9').catch(() => undefined), entry: null },
      surveyGet: { read: () => client.surveys.get(identified), entry: null },
    };
    let expected: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...Object.keys(reads)), { minLength: 1, maxLength: 8 }),
        async (names) => {
          for (const name of names) await reads[name]!.read();
          expected = [...expected, ...names.map((n) => reads[n]!.entry).filter((e): e is string => e !== null)];
          expect(summary(await entries(client))).toEqual(expected);
        },
      ),
      { numRuns: 12, seed: 20261129 },
    );
  });
});

describe('changes', () => {
  it('records keys created and revoked, settings and survey privacy changed, privacy requests created: once each', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const key = await client.apiKeys.create({ name: 'Reporting', scopes: ['surveys:read'] });
    await client.apiKeys.revoke(key.id);
    await client.apiKeys.revoke(key.id); // already revoked: nothing changes
    await client.analytics.settings.update({ anonymityThreshold: 7 });
    await client.analytics.settings.update({ anonymityThreshold: 7 }); // the same: nothing changes
    const survey = await client.surveys.create({ title: 'Pulse', questions, settings: { privacy: 'anonymous' } });
    await client.surveys.update(survey.id, { title: 'Pulse, renamed' });
    await client.surveys.update(survey.id, { settings: { privacy: 'identified' } });
    await client.surveys.update(survey.id, { settings: { privacy: 'identified' } });
    const idempotencyKey = 'privacy-request-once';
    const first = await client.privacy.requests.create(
      { type: 'erasure', subject: { externalId: 'E-1' }, scope: 'identity', dryRun: true },
      { idempotencyKey },
    );
    const replay = await client.privacy.requests.create(
      { type: 'erasure', subject: { externalId: 'E-1' }, scope: 'identity', dryRun: true },
      { idempotencyKey },
    );
    expect(replay.id).toBe(first.id);
    expect(summary(await entries(client))).toEqual([
      `api_key.created api_key:${key.id}`,
      `api_key.revoked api_key:${key.id}`,
      'settings.updated settings:analytics',
      `survey.privacy_changed survey:${survey.id}`,
      `privacy_request.created privacy_request:${first.id}`,
    ]);
  });

  it('writes nothing for a change that was refused', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const refused = await client.apiKeys
      .create({ name: 'Too much', scopes: ['surveys:read'], expiresAt: '2001-01-01T00:00:00Z' })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400 });
    const survey = await client.surveys.create({ title: 'Pulse', questions });
    await client.surveys.launch(survey.id);
    const frozen = await client.surveys
      .update(survey.id, { settings: { privacy: 'confidential' } })
      .catch((error: unknown) => error);
    expect(frozen).toMatchObject({ status: 409 });
    expect(await entries(client)).toEqual([]);
  });
});

describe('listing', () => {
  async function tenantWithEntries(count: number) {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await client.respondents.upsert('E-1', { email: 'ada@example.com' });
    for (let i = 0; i < count; i++) await client.respondents.get('E-1');
    return { client, organizationId };
  }

  it('pages by cursor both ways, newest or oldest first, and keeps filters in the cursor', async () => {
    const { client } = await tenantWithEntries(7);
    const oldest = await entries(client);
    expect(oldest).toHaveLength(7);
    expect(oldest.map((e) => e.id)).toEqual(oldest.map((e) => e.id).sort());

    const page = (query: Record<string, unknown>) =>
      client.GET('/api/v1/audit-log', { params: { query: query as never } }).then((r) => {
        expect(r.error, JSON.stringify(query)).toBeUndefined();
        return r.data!;
      });
    const first = await page({ limit: 3 });
    expect(first.data.map((e) => e.id)).toEqual(
      oldest
        .slice(4)
        .reverse()
        .map((e) => e.id),
    );
    expect(first.pagination).toMatchObject({ limit: 3, hasMore: true, previousCursor: null });
    const second = await page({ cursor: first.pagination.nextCursor!, limit: 3 });
    expect(second.data.map((e) => e.id)).toEqual(
      oldest
        .slice(1, 4)
        .reverse()
        .map((e) => e.id),
    );
    const third = await page({ cursor: second.pagination.nextCursor!, limit: 3 });
    expect(third.data.map((e) => e.id)).toEqual([oldest[0]!.id]);
    expect(third.pagination).toMatchObject({ hasMore: false, nextCursor: null });
    // Back again: the same pages.
    const back = await page({ cursor: third.pagination.previousCursor!, limit: 3 });
    expect(back.data).toEqual(second.data);
    const backAgain = await page({ cursor: back.pagination.previousCursor!, limit: 3 });
    expect(backAgain.data).toEqual(first.data);
    expect(backAgain.pagination.previousCursor).toBeNull();
    expect(backAgain.pagination.hasMore).toBe(true);

    // Oldest first, and a cursor carries the order.
    const ascending = await page({ order: 'oldest', limit: 4 });
    expect(ascending.data.map((e) => e.id)).toEqual(oldest.slice(0, 4).map((e) => e.id));
    const rest = await page({ cursor: ascending.pagination.nextCursor! });
    expect(rest.data.map((e) => e.id)).toEqual(oldest.slice(4).map((e) => e.id));

    // A cursor with other filters or another order than the request's is refused.
    for (const query of [
      { cursor: ascending.pagination.nextCursor!, order: 'newest' },
      { cursor: ascending.pagination.nextCursor!, action: 'api_key.created' },
      { cursor: 'not-a-cursor' },
      { cursor: Buffer.from('{"way":"after","id":"x"}').toString('base64url') },
      // A forged cursor carrying filters the contract would refuse as parameters.
      ...[{ targetId: 'a\u0000b' }, { from: 'yesterday' }, { action: 'everything' }, { sortBy: 'id' }].map(
        (filters) => ({
          cursor: Buffer.from(JSON.stringify({ way: 'after', id: oldest[0]!.id, order: 'oldest', filters })).toString(
            'base64url',
          ),
        }),
      ),
    ]) {
      const refused = await client.GET('/api/v1/audit-log', { params: { query: query as never } });
      expect(refused.response.status, JSON.stringify(query)).toBe(400);
      expect(refused.error).toMatchObject({ error: { code: 'validation_failed' } });
    }
    // The same filters repeated are fine.
    const repeated = await page({ cursor: ascending.pagination.nextCursor!, order: 'oldest' });
    expect(repeated.data).toEqual(rest.data);
  });

  it('filters by action, actor, target and time, and refuses an empty window', async () => {
    const { client, organizationId } = await tenantWithEntries(2);
    const me = await client.account.me();
    const other = await t.createKey(organizationId, { scopes: ['*'] });
    await t.client(other.key).respondents.list();
    const all = await entries(client);
    expect(all).toHaveLength(3);
    const list = (query: Record<string, unknown>) =>
      client
        .unwrap(client.GET('/api/v1/audit-log', { params: { query: query as never } }))
        .then((data) => data.map((e) => e.id));
    expect(await list({ actor: other.id })).toEqual([all[2]!.id]);
    expect(await list({ actor: me.apiKey.id, order: 'oldest' })).toEqual([all[0]!.id, all[1]!.id]);
    expect(await list({ actor: 'system' })).toEqual([]);
    expect(await list({ action: 'respondents.read', targetId: 'E-1', order: 'oldest' })).toEqual([
      all[0]!.id,
      all[1]!.id,
    ]);
    expect(await list({ action: 'api_key.created' })).toEqual([]);
    expect(await list({ from: all[2]!.occurredAt })).toEqual([all[2]!.id]);
    expect(await list({ to: all[0]!.occurredAt })).toEqual([]);
    const empty = await client.GET('/api/v1/audit-log', {
      params: { query: { from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' } },
    });
    expect(empty.response.status).toBe(400);
  });

  it('needs audit:read, answers 405 to every other method, and is not itself audited', async () => {
    const { client, organizationId } = await tenantWithEntries(1);
    const reader = t.client((await t.createKey(organizationId, { scopes: ['audit:read'] })).key);
    const outsider = t.client((await t.createKey(organizationId, { scopes: ['respondents:read'] })).key);
    expect((await reader.auditLog.list()).length).toBe(1);
    expect((await reader.auditLog.list()).length).toBe(1);
    const forbidden = await outsider.GET('/api/v1/audit-log');
    expect(forbidden.response.status).toBe(403);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const response = await fetch(`${t.url}/api/v1/audit-log`, {
        method,
        headers: { authorization: `Bearer ${(await t.createKey(organizationId, { scopes: ['*'] })).key}` },
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toContain('GET');
    }
    expect(await entries(client)).toHaveLength(1);
  });
});

describe('the table', () => {
  it('refuses UPDATE, DELETE and TRUNCATE; lets a year-old entry and a deleted organization’s entries go', async () => {
    const { liveKey, organizationId } = await t.createTenant();
    const client = t.client(liveKey);
    await client.respondents.upsert('E-1', { email: 'ada@example.com' });
    await client.respondents.get('E-1');
    const [entry] = await entries(client);
    const refusals = [
      sql`update audit_log set action = 'api_key.created' where organization_id = ${organizationId}`,
      sql`update audit_log set occurred_at = now() - interval '2 years' where organization_id = ${organizationId}`,
      sql`delete from audit_log where organization_id = ${organizationId}`,
      sql`truncate audit_log`,
    ];
    for (const statement of refusals)
      await expect(statement.execute(t.db), statement.compile(t.db).sql).rejects.toThrow(/append-only/);
    expect(await entries(client)).toEqual([entry]);

    // The year's expiry: an entry written more than a year ago goes, this year's stays.
    await sql`insert into audit_log (organization_id, environment, id, occurred_at, actor_type, action, target_type)
      values (${organizationId}, 'LIVE', 'aud_01AAAAAAAAAAAAAAAAAAAAAAAA', now() - interval '1 year 1 day', 'system',
        'settings.updated', 'settings')`.execute(t.db);
    expect(await entries(client)).toHaveLength(2);
    expect(await deleteExpiredEntries(t.db)).toBeGreaterThanOrEqual(1);
    expect(await entries(client)).toEqual([entry]);

    // Deleting the organization takes its log with it (the foreign key's cascade).
    await sql`delete from organizations where id = ${organizationId}`.execute(t.db);
    const left = await sql<{ n: number }>`select count(*)::int as n from audit_log
      where organization_id = ${organizationId}`.execute(t.db);
    expect(left.rows[0]!.n).toBe(0);
  });
});
