/**
 * Request sequences in the shapes real identity providers send: Okta (create, PATCH replace of active, filter by
 * userName), Microsoft Entra ID (mixed-case ops, boolean strings, paths inside a pathless value, the manager as a
 * bare value), and a bulk load of 1,000 users whose manager references come in reverse order. Plus the bulk
 * endpoint's limits and partial failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { core, enterprise, errorSchema, patchOp, scimTenant, user, type Scim } from './scim-helpers.js';

const bulkRequest = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.close();
});

const byUserName = (scim: Scim, userName: string) =>
  scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`);

describe('Okta', () => {
  it('creates, deactivates with PATCH replace, and finds the user by userName', async () => {
    const { live } = await scimTenant(t);
    // Okta first looks the user up, then creates it.
    expect((await byUserName(live, 'isaac@example.com')).body.totalResults).toBe(0);
    const created = await live('POST', '/Users', {
      schemas: [core],
      userName: 'isaac@example.com',
      name: { givenName: 'Isaac', familyName: 'Newton' },
      emails: [{ primary: true, value: 'isaac@example.com', type: 'work' }],
      displayName: 'Isaac Newton',
      locale: 'en-US',
      externalId: '00u1abcd',
      groups: [],
      password: 'ignored',
      active: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const deactivated = await live('PATCH', `/Users/${created.body.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);
    const found = await byUserName(live, 'ISAAC@example.com');
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0]).toMatchObject({ id: created.body.id, active: false, externalId: '00u1abcd' });
    // Reactivation.
    const again = await live('PATCH', `/Users/${created.body.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', path: 'active', value: true }],
    });
    expect(again.body.active).toBe(true);
  });
});

describe('Microsoft Entra ID', () => {
  it('takes "Replace"/"Add" in mixed case, boolean strings and pathless values with attribute paths', async () => {
    const { live } = await scimTenant(t);
    const created = await live('POST', '/Users', {
      schemas: [core, enterprise],
      externalId: 'grace',
      userName: 'grace@contoso.com',
      active: 'True',
      displayName: 'Grace Hopper',
      emails: [{ primary: 'True', type: 'work', value: 'grace@contoso.com' }],
      name: { formatted: 'Grace Hopper', familyName: 'Hopper', givenName: 'Grace' },
      title: 'Rear Admiral',
      [enterprise]: { department: 'Navy', employeeNumber: '1906' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.active).toBe(true);
    const id = created.body.id as string;
    const patched = await live('PATCH', `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [
        { op: 'Replace', path: 'active', value: 'False' },
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'grace.hopper@contoso.com' },
        { op: 'Replace', value: { 'name.givenName': 'Amazing Grace', title: 'Commodore' } },
        { op: 'Add', path: `${enterprise}:manager`, value: 'E-navy' },
        { op: 'Replace', path: `${enterprise}:department`, value: 'Computing' },
      ],
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({
      active: false,
      title: 'Commodore',
      name: { givenName: 'Amazing Grace', familyName: 'Hopper' },
      emails: [{ value: 'grace.hopper@contoso.com', type: 'work', primary: true }],
      [enterprise]: { department: 'Computing', employeeNumber: '1906', manager: { value: 'E-navy' } },
    });
    expect((await byUserName(live, 'grace@contoso.com')).body.Resources[0].active).toBe(false);
    // Entra removes the manager with a pathful remove.
    const removed = await live('PATCH', `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Remove', path: `${enterprise}:manager` }],
    });
    expect(removed.body[enterprise].manager).toBeUndefined();
    // A boolean string that is not one is still refused.
    const bad = await live('PATCH', `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Replace', path: 'active', value: 'Nope' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ schemas: [errorSchema], status: '400', scimType: 'invalidValue' });
  });

  it('reads a manager.value that is a user id as that user’s externalId', async () => {
    const { live } = await scimTenant(t);
    const boss = await live('POST', '/Users', user('boss', { externalId: 'E-boss' }));
    const report = await live('POST', '/Users', user('report', { [enterprise]: { manager: { value: boss.body.id } } }));
    expect(report.body[enterprise].manager).toEqual({ value: 'E-boss' });
  });
});

describe('the manager hierarchy', () => {
  it('refuses a manager that would close a cycle with 400 invalidValue, and stores nothing; accepts oneself as manager', async () => {
    const { live } = await scimTenant(t);
    const a = await live(
      'POST',
      '/Users',
      user('a', { externalId: 'E-a', [enterprise]: { manager: { value: 'E-b' } } }),
    );
    expect(a.status).toBe(201);
    const b = await live(
      'POST',
      '/Users',
      user('b', { externalId: 'E-b', [enterprise]: { manager: { value: 'E-a' } } }),
    );
    expect(b.status, JSON.stringify(b.body)).toBe(400);
    expect(b.body).toMatchObject({ schemas: [errorSchema], status: '400', scimType: 'invalidValue' });
    expect((await byUserName(live, 'b@example.com')).body.totalResults).toBe(0);
    // Managing oneself is how HR systems mark the top of the tree: stored as sent, not a cycle.
    const self = await live('PATCH', `/Users/${a.body.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', path: `${enterprise}:manager.value`, value: 'E-a' }],
    });
    expect(self.status, JSON.stringify(self.body)).toBe(200);
    expect(self.body[enterprise].manager.value).toBe('E-a');
  });
});

describe('bulk', () => {
  it(
    'creates 1,000 users whose managers come later in the request, bulkIds resolved',
    { timeout: 120_000 },
    async () => {
      const { live, allKey } = await scimTenant(t);
      // User i reports to user i+1: every manager reference points forward, to a user not created yet.
      const n = 1000;
      const operations = Array.from({ length: n }, (_, i) => ({
        method: 'POST',
        path: '/Users',
        bulkId: `b${i}`,
        data: {
          schemas: [core, enterprise],
          userName: `p${i}@example.com`,
          ...(i % 2 === 0 ? { externalId: `E-${i}` } : {}),
          ...(i + 1 < n ? { [enterprise]: { manager: { value: `bulkId:b${i + 1}` } } } : {}),
        },
      }));
      const answer = await live('POST', '/Bulk', { schemas: [bulkRequest], Operations: operations });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(200);
      const results = answer.body.Operations as Array<{ status: string; bulkId: string; location: string }>;
      expect(results).toHaveLength(n);
      expect(results.filter((r) => r.status !== '201')).toEqual([]);
      const total = await live('GET', '/Users?count=0');
      expect(total.body.totalResults).toBe(n);
      // p0 (E-0) reports to p1, whose externalId is its id (it had none); p1 to E-2.
      const p0 = (await byUserName(live, 'p0@example.com')).body.Resources[0];
      const p1 = (await byUserName(live, 'p1@example.com')).body.Resources[0];
      expect(p0[enterprise].manager.value).toBe(p1.id);
      expect(p1.externalId).toBe(p1.id);
      expect(p1[enterprise].manager.value).toBe('E-2');
      expect(results[1]!.location).toBe(p1.meta.location);
      const respondents = await fetch(`${t.url}/api/v1/respondents?pageSize=1`, {
        headers: { authorization: `Bearer ${allKey}` },
      });
      expect(((await respondents.json()) as { pagination: { totalItems: number } }).pagination.totalItems).toBe(n);
    },
  );

  it('applies each operation on its own, stops after failOnErrors, and refuses over 1,000 operations', async () => {
    const { live } = await scimTenant(t);
    const mixed = await live('POST', '/Bulk', {
      schemas: [bulkRequest],
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'a', data: user('a') },
        { method: 'POST', path: '/Users', bulkId: 'dup', data: user('a') },
        {
          method: 'PATCH',
          path: '/Users/bulkId:a',
          data: { schemas: [patchOp], Operations: [{ op: 'replace', path: 'title', value: 'T' }] },
        },
        { method: 'DELETE', path: '/Users/usr_01JD3M8Q4W6T9ZK2F7X1B5N0C8' },
        { method: 'POST', path: '/Users', bulkId: 'c', data: user('c') },
      ],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body.Operations.map((o: { status: string }) => o.status)).toEqual(['201', '409', '200', '404', '201']);
    expect(mixed.body.Operations[1].response).toMatchObject({ scimType: 'uniqueness', status: '409' });

    const stopped = await live('POST', '/Bulk', {
      schemas: [bulkRequest],
      failOnErrors: 1,
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'x', data: { userName: '' } },
        { method: 'POST', path: '/Users', bulkId: 'y', data: user('y') },
      ],
    });
    expect(stopped.body.Operations).toHaveLength(1);
    expect((await byUserName(live, 'y@example.com')).body.totalResults).toBe(0);

    const tooMany = await live('POST', '/Bulk', {
      schemas: [bulkRequest],
      Operations: Array.from({ length: 1001 }, () => ({ method: 'DELETE', path: '/Users/x' })),
    });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatchObject({ schemas: [errorSchema], status: '413', scimType: 'tooMany' });
    const huge = await live('POST', '/Bulk', {
      schemas: [bulkRequest],
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'h', data: { ...user('h'), title: 'x'.repeat(1_100_000) } },
      ],
    });
    expect(huge.status).toBe(413);
    expect(huge.body.scimType).toBe('tooMany');
  });

  it('replays a keyed bulk request and keeps its refusals', async () => {
    const { live } = await scimTenant(t);
    const body = {
      schemas: [bulkRequest],
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'k', data: user('k') },
        { method: 'POST', path: '/Users', bulkId: 'k2', data: { userName: 'none', active: 'maybe' } },
      ],
    };
    const first = await live('POST', '/Bulk', body, { 'idempotency-key': 'bulk-1' });
    const again = await live('POST', '/Bulk', body, { 'idempotency-key': 'bulk-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(first.body.Operations.map((o: { status: string }) => o.status)).toEqual(['201', '400']);
    expect((await live('GET', '/Users?count=0')).body.totalResults).toBe(1);
    const created = await live('POST', '/Users', user('once'), { 'idempotency-key': 'user-1' });
    const replay = await live('POST', '/Users', user('once'), { 'idempotency-key': 'user-1' });
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(created.body.id);
    const refused = await live('POST', '/Users', user('once'), { 'idempotency-key': 'user-2' });
    expect(refused.status).toBe(409);
    const refusedAgain = await live('POST', '/Users', user('once'), { 'idempotency-key': 'user-2' });
    expect(refusedAgain.body).toEqual(refused.body);
  });
});
