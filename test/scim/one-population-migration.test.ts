/**
 * Migration 2026-11-29T0600 gives the respondents written before it their SCIM users: named by the e-mail address,
 * else (the name is taken) by the externalId, else by the id; ids in the service's format, sorted by when each
 * respondent was created; the SCIM users made before keep their id and name and get their one address as SCIM
 * showed it. Down and up again keeps every user.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../../server/src/db/migrate.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { apiClient, lookup, scimClient } from './scim-helpers.js';

const before = '2026-11-29T0500_people_without_email';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ role: 'api' });
});
afterAll(async () => {
  await t?.close();
});

interface UserRow {
  external_id: string;
  id: string;
  user_name: string;
  emails: unknown;
}

const usersOf = async (organizationId: string) =>
  (
    await sql<UserRow>`select external_id, id, user_name, emails from scim_users
      where organization_id = ${organizationId} and environment = 'LIVE' order by external_id`.execute(t.db)
  ).rows;

it(
  'backfills a user for every respondent, each name once, and keeps the users there were',
  { timeout: 120_000 },
  async () => {
    const organizationId = await t.createOrganization('BUSINESS');
    await migrateTo(t.db, before);
    const respondent = (externalId: string, email: string | null, createdAt: string) =>
      sql`insert into respondents (organization_id, environment, external_id, email, content_hash, created_at)
      values (${organizationId}, 'LIVE', ${externalId}, ${email}, 'h', ${createdAt}::timestamptz)`.execute(t.db);
    // Users SCIM made under the old schema: one named like another respondent's address, one like an externalId.
    await respondent('S-1', 'scim.one@acme.test', '2026-01-01T00:00:00Z');
    await respondent('S-2', 'scim.two@acme.test', '2026-01-01T00:00:01Z');
    for (const [externalId, id, userName] of [
      ['S-1', 'usr_01KAAAAAAAAAAAAAAAAAAAAAA1', 'taken@acme.test'],
      ['S-2', 'usr_01KAAAAAAAAAAAAAAAAAAAAAA2', 'r-4'],
    ])
      await sql`insert into scim_users (organization_id, environment, id, external_id, user_name)
      values (${organizationId}, 'LIVE', ${id}, ${externalId}, ${userName})`.execute(t.db);
    await respondent('R-1', 'ada@acme.test', '2026-02-01T00:00:00Z');
    await respondent('R-2', null, '2026-02-02T00:00:00Z');
    await respondent('R-3', 'taken@acme.test', '2026-02-03T00:00:00Z');
    await respondent('R-4', 'TAKEN@acme.test', '2026-02-04T00:00:00Z');
    await respondent('R-5', 'shared@acme.test', '2026-02-05T00:00:00Z');
    await respondent('R-6', 'Shared@acme.test', '2026-02-06T00:00:00Z');
    await respondent('R-7', 'x@acme.test', '2026-02-07T00:00:00Z');
    await sql`insert into respondents (organization_id, environment, external_id, email, content_hash)
    values (${organizationId}, 'TEST', 'R-1', 'ada@acme.test', 'h')`.execute(t.db);

    await migrateToLatest(t.db);
    const users = await usersOf(organizationId);
    const byKey = new Map(users.map((u) => [u.external_id, u]));
    expect([...byKey.keys()]).toEqual(['R-1', 'R-2', 'R-3', 'R-4', 'R-5', 'R-6', 'R-7', 'S-1', 'S-2']);
    const work = (value: string) => [{ value, type: 'work', primary: true }];
    expect(byKey.get('S-1')).toEqual({
      external_id: 'S-1',
      id: 'usr_01KAAAAAAAAAAAAAAAAAAAAAA1',
      user_name: 'taken@acme.test',
      emails: work('scim.one@acme.test'),
    });
    expect(byKey.get('S-2')!.user_name).toBe('r-4');
    expect(byKey.get('R-1')).toMatchObject({ user_name: 'ada@acme.test', emails: work('ada@acme.test') });
    expect(byKey.get('R-2')).toMatchObject({ user_name: 'R-2', emails: [] });
    // The address is another user's name: the externalId; that taken too (case-insensitively): the id.
    expect(byKey.get('R-3')!.user_name).toBe('R-3');
    expect(byKey.get('R-4')!.user_name).toBe(byKey.get('R-4')!.id);
    const shared = [byKey.get('R-5')!.user_name, byKey.get('R-6')!.user_name];
    expect([
      ['shared@acme.test', 'R-6'],
      ['R-5', 'Shared@acme.test'],
    ]).toContainEqual(shared);
    for (const user of users) expect(user.id).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/);
    // Backfilled ids sort as their respondents were created.
    const backfilled = users.filter((u) => u.external_id.startsWith('R-'));
    expect(backfilled.map((u) => u.id)).toEqual(backfilled.map((u) => u.id).sort());
    expect(
      (
        await sql<{ n: number }>`select count(*)::int as n from scim_users where organization_id = ${organizationId}
      and environment = 'TEST'`.execute(t.db)
      ).rows[0]!.n,
    ).toBe(1);

    // Through SCIM: the HR system's people are found, and a new respondent gets its user from the writer.
    const scim = scimClient(t, (await t.createKey(organizationId, { scopes: ['scim'] })).key);
    expect((await lookup(scim, 'userName eq "ada@acme.test"')).body.Resources[0].externalId).toBe('R-1');
    const api = apiClient(t, (await t.createKey(organizationId, { scopes: ['*'] })).key);
    expect((await api('PUT', '/respondents/R-8', { email: 'new@acme.test' })).status).toBe(201);
    expect((await lookup(scim, 'externalId eq "R-8"')).body.Resources[0].userName).toBe('new@acme.test');

    // Down and up again: every user stays as it is.
    const now = await usersOf(organizationId);
    await migrateTo(t.db, before);
    await migrateToLatest(t.db);
    expect(await usersOf(organizationId)).toEqual(now);
  },
);
