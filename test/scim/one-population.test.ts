/**
 * One population: every respondent is a SCIM user, however it was written. People an HR system wrote through
 * `PUT /api/v1/respondents/{externalId}` or a sync (with and without an e-mail address) are found by the lookups
 * identity providers make (`userName eq`, `externalId eq`, `emails.value eq`, `emails[type eq "work"]`), keep a
 * stable `id`, and are linked instead of copied: the Okta sequence (look up by userName, create or link, PATCH
 * `active` false to deactivate) and the Entra ID sequence (look up by externalId or userName, POST, PATCH with its
 * spellings such as `"active": "False"`) end with no second respondent, and a `POST` of a known person is 409
 * `uniqueness`. The HR system's later changes of the address show in SCIM; the addresses SCIM added stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { sync } from '../respondents/fixtures.js';
import {
  apiClient,
  core,
  enterprise,
  errorSchema,
  lookup,
  patchOp,
  scimTenant,
  type Scim,
  type ScimAnswer,
} from './scim-helpers.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/** A tenant as an HR team has it: an API key for its HRIS (PUT, sync) and a SCIM key for its identity provider. */
async function hrTenant() {
  const { live, allKey } = await scimTenant(t);
  const api = apiClient(t, allKey);
  const put = async (externalId: string, body: Record<string, unknown>) => {
    const answer = await api('PUT', `/respondents/${encodeURIComponent(externalId)}`, body);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    return answer.body.data;
  };
  const syncAll = async (records: Array<Record<string, unknown>>, mode: 'upsert' | 'replace' = 'upsert') => {
    const { job } = await sync(t.client(allKey), mode, records);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(job.stats.errors, JSON.stringify(job.errors)).toBe(0);
    return job;
  };
  const respondentCount = async (): Promise<number> =>
    (await api('GET', '/respondents?pageSize=1')).body.pagination.totalItems as number;
  return { scim: live, api, put, syncAll, respondentCount };
}

const only = (answer: ScimAnswer) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.totalResults, JSON.stringify(answer.body)).toBe(1);
  return answer.body.Resources[0];
};

const expectUniqueness = (answer: ScimAnswer, holder: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(409);
  expect(answer.body).toMatchObject({ schemas: [errorSchema], status: '409', scimType: 'uniqueness' });
  expect(answer.body.detail).toContain(holder);
};

const patch = (scim: Scim, id: string, ...operations: unknown[]) =>
  scim('PATCH', `/Users/${id}`, { schemas: [patchOp], Operations: operations });

describe('people an HR system wrote are SCIM users', () => {
  it('gives a respondent written by PUT a user: userName its address, a stable id, found by every lookup', async () => {
    const { scim, put } = await hrTenant();
    await put('H-M11-1', { email: 'mei.lin@acme.test', firstName: 'Mei', lastName: 'Lin', department: 'Plant 11' });
    const user = only(await lookup(scim, 'externalId eq "H-M11-1"'));
    expect(user).toMatchObject({
      id: expect.stringMatching(/^usr_[0-9A-Z]{26}$/),
      externalId: 'H-M11-1',
      userName: 'mei.lin@acme.test',
      name: { givenName: 'Mei', familyName: 'Lin' },
      emails: [{ value: 'mei.lin@acme.test', type: 'work', primary: true }],
      active: true,
      [enterprise]: { department: 'Plant 11' },
    });
    for (const filter of [
      'userName eq "MEI.LIN@acme.test"',
      'emails.value eq "mei.lin@acme.test"',
      'emails[type eq "work" and value eq "mei.lin@acme.test"]',
      'emails[type eq "work"] and externalId eq "H-M11-1"',
    ])
      expect(only(await lookup(scim, filter)).id, filter).toBe(user.id);
    expect((await scim('GET', `/Users/${user.id}`)).body).toEqual(user);
    // The HR system's next write changes the person, not the user's id.
    await put('H-M11-1', { email: 'mei.lin@acme.test', firstName: 'Mei', lastName: 'Lin', department: 'Plant 12' });
    const again = await scim('GET', `/Users/${user.id}`);
    expect(again.body[enterprise].department).toBe('Plant 12');
    expect(again.body.meta.version).not.toBe(user.meta.version);
  });

  it('gives every respondent of a sync a user, with or without an address, each userName once', async () => {
    const { scim, syncAll } = await hrTenant();
    await syncAll([
      { externalId: 'S-1', email: 'ada@acme.test', firstName: 'Ada' },
      { externalId: 'S-2', firstName: 'Bo', department: 'Warehouse' },
      { externalId: 'S-3', email: null, firstName: 'Cy' },
      // Two people the HR system gives one shared mailbox: the address names one of them.
      { externalId: 'S-4', email: 'desk@acme.test' },
      { externalId: 'S-5', email: 'DESK@acme.test' },
    ]);
    const all = await scim('GET', '/Users?sortBy=externalId');
    expect(all.body.totalResults).toBe(5);
    const byKey = new Map(
      (all.body.Resources as Array<{ externalId: string; userName: string; emails?: unknown }>).map((u) => [
        u.externalId,
        u,
      ]),
    );
    expect(byKey.get('S-1')).toMatchObject({
      userName: 'ada@acme.test',
      emails: [{ value: 'ada@acme.test', type: 'work', primary: true }],
    });
    // Without an address: named by the externalId, and no emails.
    for (const key of ['S-2', 'S-3']) {
      expect(byKey.get(key)!.userName).toBe(key);
      expect(byKey.get(key)!.emails).toBeUndefined();
      expect(only(await lookup(scim, `userName eq "${key}"`)).externalId).toBe(key);
    }
    const desk = [byKey.get('S-4')!.userName, byKey.get('S-5')!.userName];
    expect([
      ['desk@acme.test', 'S-5'],
      ['S-4', 'DESK@acme.test'],
    ]).toContainEqual(desk);
    expect((await lookup(scim, 'emails.value eq "desk@acme.test"')).body.totalResults).toBe(2);
    // A replace sync that keeps them keeps their ids.
    const ids = new Map(
      (all.body.Resources as Array<{ externalId: string; id: string }>).map((u) => [u.externalId, u.id]),
    );
    await syncAll(
      [
        { externalId: 'S-1', email: 'ada@acme.test', firstName: 'Ada', department: 'Office' },
        { externalId: 'S-2', firstName: 'Bo', department: 'Warehouse' },
      ],
      'replace',
    );
    const kept = await scim('GET', '/Users?sortBy=externalId');
    expect(kept.body.Resources.map((u: { externalId: string; id: string }) => [u.externalId, u.id])).toEqual([
      ['S-1', ids.get('S-1')],
      ['S-2', ids.get('S-2')],
    ]);
  });

  it(
    'completes a first sync whose parallel batches share mailboxes, met in opposite orders, in one run',
    { timeout: 120_000 },
    async () => {
      const { scim, syncAll } = await hrTenant();
      // Two batches (5,000 and 2), written by parallel transactions, the second checked for manager cycles against
      // the first (everyone reports to B-0). The first meets team.a first and team.b last, the second the other way
      // round, so it holds team.b before the first one gets there. Names given while writing would make them wait
      // for each other; given at the commit, which the batches take one at a time, they do not.
      const n = 5_002;
      const email = (i: number) => {
        if (i >= 5_000) return i === 5_000 ? 'team.b@acme.test' : 'team.a@acme.test';
        if (i === 4_999) return 'team.b@acme.test';
        return i % 100 === 0 ? 'team.a@acme.test' : `p${i}@acme.test`;
      };
      const job = await syncAll(
        Array.from({ length: n }, (_, i) => ({
          externalId: `B-${i}`,
          email: email(i),
          managerId: i === 0 ? null : 'B-0',
        })),
      );
      expect(job.stats.created).toBe(n);
      const attempts = await t.db
        .selectFrom('sync_jobs')
        .select('attempts')
        .where('id', '=', job.jobId)
        .executeTakeFirstOrThrow();
      expect(attempts.attempts).toBe(1);
      expect((await scim('GET', '/Users?count=0')).body.totalResults).toBe(n);
      for (const team of ['team.a', 'team.b']) {
        expect(only(await lookup(scim, `userName eq "${team}@acme.test"`)).emails[0].value).toBe(`${team}@acme.test`);
        expect((await lookup(scim, `emails.value eq "${team}@acme.test"`)).body.totalResults).toBe(
          team === 'team.a' ? 51 : 2,
        );
      }
    },
  );

  it('names a respondent by its externalId when its address is another user’s userName', async () => {
    const { scim, put } = await hrTenant();
    const scimUser = await scim('POST', '/Users', {
      userName: 'front.desk@acme.test',
      externalId: 'S-front',
      emails: [{ value: 'reception@acme.test', type: 'work' }],
    });
    expect(scimUser.status, JSON.stringify(scimUser.body)).toBe(201);
    await put('H-9', { email: 'front.desk@acme.test' });
    const user = only(await lookup(scim, 'externalId eq "H-9"'));
    expect(user.userName).toBe('H-9');
    expect(only(await lookup(scim, 'emails.value eq "front.desk@acme.test"')).externalId).toBe('H-9');
  });
});

describe('Okta: look up by userName, then create or link, then deactivate', () => {
  it('links the people the HR system wrote and creates only the others', async () => {
    const { scim, put, syncAll, respondentCount, api } = await hrTenant();
    await put('H-1', { email: 'john.doe@acme.test', firstName: 'John', lastName: 'Doe', department: 'Sales' });
    await syncAll([
      { externalId: 'H-2', email: 'jane.roe@acme.test', firstName: 'Jane', lastName: 'Roe' },
      { externalId: 'H-3', firstName: 'Sam', lastName: 'Poe' },
    ]);
    const oktaUser = (userName: string, givenName: string, familyName: string, email = userName) => ({
      schemas: [core],
      userName,
      name: { givenName, familyName },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: `${givenName} ${familyName}`,
      locale: 'en-US',
      groups: [],
      password: 'ignored-by-the-service',
      active: true,
    });
    const linked: string[] = [];
    for (const [userName, given, family] of [
      ['john.doe@acme.test', 'John', 'Doe'],
      ['jane.roe@acme.test', 'Jane', 'Roe'],
      ['new.hire@acme.test', 'New', 'Hire'],
    ] as const) {
      // Okta's import and its push both start with this lookup.
      const found = await lookup(scim, `userName eq "${userName}"`);
      expect(found.status).toBe(200);
      if (found.body.totalResults === 1) {
        const id = found.body.Resources[0].id as string;
        // Linked: Okta pushes its profile with PUT (the whole user).
        const pushed = await scim('PUT', `/Users/${id}`, { ...oktaUser(userName, given, family), id });
        expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
        linked.push(pushed.body.externalId);
      } else {
        expect(found.body.totalResults).toBe(0);
        const created = await scim('POST', '/Users', oktaUser(userName, given, family));
        expect(created.status, JSON.stringify(created.body)).toBe(201);
      }
    }
    expect(linked).toEqual(['H-1', 'H-2']);
    expect(await respondentCount()).toBe(4);

    // A create for a known person anyway (another Okta username, the same mailbox) is refused, not copied.
    const john = only(await lookup(scim, 'externalId eq "H-1"'));
    expectUniqueness(await scim('POST', '/Users', oktaUser('jdoe', 'John', 'Doe', 'John.Doe@acme.test')), john.id);
    expectUniqueness(
      await scim('POST', '/Users', { ...oktaUser('jd@acme.test', 'John', 'Doe'), userName: 'john.doe@acme.test' }),
      john.id,
    );
    expect(await respondentCount()).toBe(4);

    // Deactivation: PATCH replace active false; the person and their answers stay.
    const deactivated = await patch(scim, john.id, { op: 'replace', value: { active: false } });
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect(only(await lookup(scim, 'active eq false')).id).toBe(john.id);
    expect((await api('GET', '/respondents/H-1')).status).toBe(200);
    expect(await respondentCount()).toBe(4);
  });
});

describe('Entra ID: look up by externalId or userName, then POST, then PATCH in its spellings', () => {
  it('matches the HR system’s people, updates them with Entra’s operations and creates no copy', async () => {
    const { scim, syncAll, respondentCount } = await hrTenant();
    await syncAll([
      { externalId: 'H-M11-1', email: 'mei@contoso.test', firstName: 'Mei', lastName: 'Lin', department: 'Plant' },
      { externalId: 'H-F-9', firstName: 'Ravi', lastName: 'Kumar', department: 'Drivers' },
    ]);
    // Matching on externalId (Entra's attribute mapping to an HR employee id).
    const mei = only(await lookup(scim, 'externalId eq "H-M11-1"'));
    const ravi = only(await lookup(scim, 'externalId eq "H-F-9"'));
    // Entra creates where its lookup finds nobody; a POST of a matched person is 409, naming the user to link.
    expectUniqueness(
      await scim('POST', '/Users', {
        schemas: [core, enterprise],
        externalId: 'H-M11-1',
        userName: 'mei.lin@contoso.test',
        active: true,
        emails: [{ primary: true, type: 'work', value: 'mei.lin@contoso.test' }],
        meta: { resourceType: 'User' },
        name: { formatted: 'Mei Lin', familyName: 'Lin', givenName: 'Mei' },
        roles: [],
      }),
      mei.id,
    );
    expectUniqueness(
      await scim('POST', '/Users', {
        schemas: [core],
        externalId: 'aad-0001',
        userName: 'mlin@contoso.test',
        emails: [{ primary: 'True', type: 'work', value: 'MEI@contoso.test' }],
      }),
      mei.id,
    );
    expect(await respondentCount()).toBe(2);

    // Updates of the matched people, as Entra sends them.
    const updated = await patch(
      scim,
      mei.id,
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'mei.lin@contoso.test' },
      { op: 'Add', path: 'emails[type eq "home"].value', value: 'mei@home.example' },
      { op: 'Replace', path: 'userName', value: 'mei.lin@contoso.test' },
      { op: 'Replace', value: { 'name.givenName': 'Mei-Ling' } },
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({
      id: mei.id,
      externalId: 'H-M11-1',
      userName: 'mei.lin@contoso.test',
      name: { givenName: 'Mei-Ling', familyName: 'Lin' },
      emails: [
        { value: 'mei.lin@contoso.test', type: 'work', primary: true },
        { value: 'mei@home.example', type: 'home', primary: false },
      ],
    });
    // A driver without an address gets a first work address the way Entra adds one.
    const addressed = await patch(scim, ravi.id, {
      op: 'Add',
      path: 'emails[type eq "work"].value',
      value: 'ravi@contoso.test',
    });
    expect(addressed.body.emails).toEqual([{ value: 'ravi@contoso.test', type: 'work', primary: false }]);
    expect(only(await lookup(scim, 'userName eq "mei.lin@contoso.test"')).id).toBe(mei.id);

    // Disable: "False" as a string (Entra's long-standing spelling) and as a boolean.
    const disabled = await patch(scim, mei.id, { op: 'Replace', path: 'active', value: 'False' });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body.active).toBe(false);
    expect((await patch(scim, ravi.id, { op: 'replace', path: 'active', value: false })).body.active).toBe(false);
    expect((await lookup(scim, 'active eq false')).body.totalResults).toBe(2);

    // Someone the HR system does not know yet is created, once.
    expect((await lookup(scim, 'userName eq "new@contoso.test"')).body.totalResults).toBe(0);
    const created = await scim('POST', '/Users', {
      schemas: [core],
      externalId: 'aad-0002',
      userName: 'new@contoso.test',
      active: 'True',
      emails: [{ primary: true, type: 'work', value: 'new@contoso.test' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await respondentCount()).toBe(3);
  });
});

describe('the HR system and SCIM write the same person', () => {
  it('shows the HR system’s address changes in SCIM, keeping the addresses SCIM added', async () => {
    const { scim, put, api } = await hrTenant();
    const created = await scim('POST', '/Users', {
      userName: 'kim',
      externalId: 'E-kim',
      emails: [
        { value: 'kim@acme.test', type: 'work', primary: true },
        { value: 'kim@home.example', type: 'home' },
      ],
    });
    const id = created.body.id as string;
    // The HR system moves the person to a new work address.
    await put('E-kim', { email: 'kim.park@acme.test' });
    let user = (await scim('GET', `/Users/${id}`)).body;
    expect(user.userName).toBe('kim');
    expect(user.emails).toEqual([
      { value: 'kim.park@acme.test', type: 'work', primary: true },
      { value: 'kim@home.example', type: 'home', primary: false },
    ]);
    // …then to the home address SCIM knows: that one becomes the primary.
    await put('E-kim', { email: 'kim@home.example' });
    user = (await scim('GET', `/Users/${id}`)).body;
    expect(user.emails).toEqual([
      { value: 'kim.park@acme.test', type: 'work', primary: false },
      { value: 'kim@home.example', type: 'home', primary: true },
    ]);
    expect(only(await lookup(scim, 'emails[primary eq true and type eq "home"]')).id).toBe(id);
    // A PATCH of something else keeps the respondent's address.
    await patch(scim, id, { op: 'replace', path: 'title', value: 'Driver' });
    expect((await api('GET', '/respondents/E-kim')).body.data.email).toBe('kim@home.example');
    // …and no address at all: SCIM shows none, so no SCIM write can bring one back by accident.
    await put('E-kim', { email: null });
    user = (await scim('GET', `/Users/${id}`)).body;
    expect(user.emails).toBeUndefined();
    await patch(scim, id, { op: 'replace', path: 'title', value: 'Dispatcher' });
    expect((await api('GET', '/respondents/E-kim')).body.data.email).toBeNull();
    // Deleting the respondent deletes the user.
    expect((await api('DELETE', '/respondents/E-kim')).status).toBeLessThan(300);
    expect((await scim('GET', `/Users/${id}`)).status).toBe(404);
  });
});
