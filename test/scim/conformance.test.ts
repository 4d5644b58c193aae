/**
 * RFC 7643/7644 conformance, walked the way identity providers walk it, over real HTTP: creating users without an
 * e-mail address, with several (each kept with its `type` and `primary`), with a SCIM dateTime `hireDate`; filters on
 * the multi-valued `emails` (a comparison holds when one address matches, a value filter when one address matches all
 * of it); PATCH add / replace / remove of addresses with and without paths and value filters (RFC 7644 §3.5.2: one
 * primary, `noTarget`, all or nothing); Bulk; and unknown URLs answered in SCIM's error format and media type. After
 * every change the respondent behind the user is read through `/api/v1`: its `email` is the designated address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  apiClient,
  core,
  enterprise,
  errorSchema,
  lookup,
  own,
  patchOp,
  scimTenant,
  type Scim,
  type ScimAnswer,
} from './scim-helpers.js';

const bulkRequest = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

const expectScimError = (answer: ScimAnswer, status: number, scimType?: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/scim\+json/);
  expect(answer.body.schemas).toEqual([errorSchema]);
  expect(answer.body.status).toBe(String(status));
  if (scimType) expect(answer.body.scimType).toBe(scimType);
};

/** A tenant's SCIM client, and the e-mail address of the respondent behind a user (through `/api/v1`). */
async function tenant() {
  const { live, allKey } = await scimTenant(t);
  const api = apiClient(t, allKey);
  const emailOf = async (externalId: string): Promise<string | null> => {
    const answer = await api('GET', `/respondents/${encodeURIComponent(externalId)}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.email as string | null;
  };
  const respondentCount = async (): Promise<number> =>
    (await api('GET', '/respondents?pageSize=1')).body.pagination.totalItems as number;
  return { scim: live, api, emailOf, respondentCount };
}

const patch = (scim: Scim, id: string, ...operations: unknown[]) =>
  scim('PATCH', `/Users/${id}`, { schemas: [patchOp], Operations: operations });

describe('creating users (RFC 7644 §3.3)', () => {
  it('creates a user without e-mail: only userName is required, and the respondent has no address', async () => {
    const { scim, emailOf } = await tenant();
    const created = await scim('POST', '/Users', {
      schemas: [core],
      userName: 'ana.silva.plant4',
      externalId: 'F-17',
      name: { givenName: 'Ana', familyName: 'Silva' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.emails).toBeUndefined();
    expect(await emailOf('F-17')).toBeNull();
    expect((await scim('GET', `/Users/${created.body.id}`)).body).toEqual(created.body);
    // A PUT without emails, and a PATCH of something else, keep it so.
    const replaced = await scim('PUT', `/Users/${created.body.id}`, {
      schemas: [core],
      userName: 'ana.silva.plant4',
      title: 'Line lead',
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body.emails).toBeUndefined();
    expect((await patch(scim, created.body.id, { op: 'replace', path: 'active', value: false })).status).toBe(200);
    expect(await emailOf('F-17')).toBeNull();
    const without = await lookup(scim, 'not (emails pr)');
    expect(without.body.Resources.map((u: { id: string }) => u.id)).toEqual([created.body.id]);
  });

  it('keeps every address with its type and primary; the respondent gets the primary, else the first work, else the first', async () => {
    const { scim, emailOf } = await tenant();
    const cases: Array<[string, Array<Record<string, unknown>>, string]> = [
      [
        'both',
        [
          { value: 'both@acme.test', type: 'work', primary: true },
          { value: 'both@home.example', type: 'home' },
        ],
        'both@acme.test',
      ],
      [
        'workfirst',
        [
          { value: 'wf@home.example', type: 'home' },
          { value: 'wf@acme.test', type: 'work' },
        ],
        'wf@acme.test',
      ],
      [
        'homeprimary',
        [
          { value: 'hp@acme.test', type: 'work', primary: false },
          { value: 'hp@home.example', type: 'home', primary: 'True' },
        ],
        'hp@home.example',
      ],
      [
        'untyped',
        [
          { value: 'u1@elsewhere.example', type: 'other' },
          { value: 'u2@home.example', type: 'home', display: 'Home address' },
        ],
        'u1@elsewhere.example',
      ],
    ];
    for (const [name, emails, designated] of cases) {
      const created = await scim('POST', '/Users', {
        schemas: [core],
        userName: name,
        externalId: `E-${name}`,
        emails,
      });
      expect(created.status, `${name}: ${JSON.stringify(created.body)}`).toBe(201);
      expect(created.body.emails, name).toEqual(
        emails.map((email) => ({ ...email, primary: email.primary === true || email.primary === 'True' })),
      );
      expect(await emailOf(`E-${name}`), name).toBe(designated);
      expect((await scim('GET', `/Users/${created.body.id}`)).body.emails, name).toEqual(created.body.emails);
    }
    // An entry without a value names no address and is left out.
    const sparse = await scim('POST', '/Users', {
      userName: 'sparse',
      externalId: 'E-sparse',
      emails: [{ type: 'work' }, { value: '', type: 'work' }, { value: 'sparse@home.example', type: 'home' }],
    });
    expect(sparse.body.emails).toEqual([{ value: 'sparse@home.example', type: 'home', primary: false }]);
    expect(await emailOf('E-sparse')).toBe('sparse@home.example');
  });

  it('takes hireDate as a SCIM dateTime, kept as its date in UTC', async () => {
    const { scim, api } = await tenant();
    const created = await scim('POST', '/Users', {
      schemas: [core, own],
      userName: 'hired@acme.test',
      externalId: 'E-hired',
      [own]: { hireDate: '2008-01-23T04:56:22Z' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body[own].hireDate).toBe('2008-01-23');
    expect((await api('GET', '/respondents/E-hired')).body.data.hireDate).toBe('2008-01-23');
  });

  it('refuses two primary addresses, a value that is no address, and a type that is no string; stores nothing', async () => {
    const { scim, respondentCount } = await tenant();
    for (const emails of [
      [
        { value: 'a@acme.test', primary: true },
        { value: 'b@acme.test', primary: 'true' },
      ],
      [{ value: 'not an address', type: 'work' }],
      [{ value: 'c@acme.test', type: 7 }],
      { value: 'd@acme.test' },
    ]) {
      const refused = await scim('POST', '/Users', { userName: 'refused', emails });
      expectScimError(refused, 400, 'invalidValue');
    }
    expect(await respondentCount()).toBe(0);
  });
});

describe('filters on multi-valued attributes (RFC 7644 §3.4.2.2)', () => {
  let scim: Scim;
  const names = async (filter: string): Promise<string[]> => {
    const answer = await lookup(scim, filter);
    expect(answer.status, `${filter}: ${JSON.stringify(answer.body)}`).toBe(200);
    return (answer.body.Resources as Array<{ userName: string }>).map((u) => u.userName).sort();
  };

  beforeAll(async () => {
    ({ scim } = await tenant());
    const users: Array<[string, Array<Record<string, unknown>>]> = [
      [
        'u1',
        [
          { value: 'u1@acme.test', type: 'work', primary: true },
          { value: 'u1@home.example', type: 'home' },
        ],
      ],
      [
        'u2',
        [
          { value: 'u2@acme.test', type: 'work' },
          { value: 'u2@home.example', type: 'home', display: 'Private' },
        ],
      ],
      [
        'u3',
        [
          { value: 'u3@other.test', type: 'work', primary: true },
          { value: 'u3@acme.test', type: 'home' },
        ],
      ],
      ['u4', []],
      ['u5', [{ value: 'u5@acme.test', type: 'WORK' }]],
    ];
    for (const [userName, emails] of users) {
      const created = await scim('POST', '/Users', { schemas: [core], userName, emails });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
  });

  it('matches a value filter against one address at a time', async () => {
    expect(await names('emails[type eq "home"]')).toEqual(['u1', 'u2', 'u3']);
    expect(await names('emails[type eq "work" and value ew "@acme.test"]')).toEqual(['u1', 'u2', 'u5']);
    expect(await names('emails[type eq "home" and value ew "@acme.test"]')).toEqual(['u3']);
    expect(await names('emails[primary eq true]')).toEqual(['u1', 'u3']);
    expect(await names('emails[not (type eq "work")]')).toEqual(['u1', 'u2', 'u3']);
    expect(await names('emails[display pr]')).toEqual(['u2']);
    expect(await names('emails[type eq "home" or value sw "u5"]')).toEqual(['u1', 'u2', 'u3', 'u5']);
  });

  it('matches a comparison on a sub-attribute when one address does, across every address', async () => {
    expect(await names('emails.type eq "home"')).toEqual(['u1', 'u2', 'u3']);
    expect(await names('emails.value eq "U2@home.example"')).toEqual(['u2']);
    expect(await names('emails eq "u3@acme.test"')).toEqual(['u3']);
    expect(await names('emails.value ew "@acme.test"')).toEqual(['u1', 'u2', 'u3', 'u5']);
    expect(await names('emails.type eq "home" and emails.value ew "@acme.test"')).toEqual(['u1', 'u2', 'u3']);
    expect(await names('emails.primary eq true')).toEqual(['u1', 'u3']);
    expect(await names('emails pr')).toEqual(['u1', 'u2', 'u3', 'u5']);
    expect(await names('not (emails pr)')).toEqual(['u4']);
    expect(await names('emails.value ew "@acme.test" and not (emails[type eq "home"])')).toEqual(['u5']);
    expect(await names(`${core}:emails.type eq "home"`)).toEqual(['u1', 'u2', 'u3']);
  });

  it('sorts by the address distributions use, and refuses what it does not keep', async () => {
    const sorted = await scim('GET', `/Users?sortBy=emails&filter=${encodeURIComponent('emails pr')}`);
    expect(sorted.body.Resources.map((u: { userName: string }) => u.userName)).toEqual(['u1', 'u2', 'u3', 'u5']);
    for (const filter of ['emails.nope eq "x"', 'emails[nope eq "x"]', 'emails[type eq "home"].value eq "x"'])
      expectScimError(await lookup(scim, filter), 400, 'invalidFilter');
  });
});

describe('PATCH of e-mail addresses (RFC 7644 §3.5.2)', () => {
  it('adds, replaces and removes addresses with and without paths and value filters', async () => {
    const { scim, emailOf } = await tenant();
    const created = await scim('POST', '/Users', {
      schemas: [core],
      userName: 'mo',
      externalId: 'E-mo',
      emails: [{ value: 'mo@acme.test', type: 'work', primary: true }],
    });
    const id = created.body.id as string;
    const emails = async () => (await scim('GET', `/Users/${id}`)).body.emails;

    // add with a path: a new address; an address the user has already is not repeated.
    let answer = await patch(scim, id, {
      op: 'add',
      path: 'emails',
      value: [{ value: 'mo@home.example', type: 'home' }],
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    answer = await patch(scim, id, { op: 'add', path: 'emails', value: [{ value: 'MO@home.example', type: 'home' }] });
    expect(answer.body.emails).toEqual([
      { value: 'mo@acme.test', type: 'work', primary: true },
      { value: 'MO@home.example', type: 'home', primary: false },
    ]);
    // replace through a value filter changes the addresses it matches, and only them.
    answer = await patch(scim, id, {
      op: 'replace',
      path: 'emails[type eq "home"].value',
      value: 'mo@family.example',
    });
    expect(answer.body.emails[1]).toEqual({ value: 'mo@family.example', type: 'home', primary: false });
    expect(await emailOf('E-mo')).toBe('mo@acme.test');
    // Making an address primary makes the other not primary; the respondent follows.
    answer = await patch(scim, id, { op: 'replace', path: 'emails[type eq "home"].primary', value: true });
    expect(answer.body.emails).toEqual([
      { value: 'mo@acme.test', type: 'work', primary: false },
      { value: 'mo@family.example', type: 'home', primary: true },
    ]);
    expect(await emailOf('E-mo')).toBe('mo@family.example');
    // remove through a value filter removes what it matches; the work address is the one left.
    answer = await patch(scim, id, { op: 'remove', path: 'emails[type eq "home"]' });
    expect(answer.body.emails).toEqual([{ value: 'mo@acme.test', type: 'work', primary: false }]);
    expect(await emailOf('E-mo')).toBe('mo@acme.test');
    // add through a value filter that matches nothing creates the address it names (Entra ID's first home address).
    answer = await patch(scim, id, { op: 'add', path: 'emails[type eq "home"].value', value: 'mo@home.example' });
    expect(answer.body.emails).toEqual([
      { value: 'mo@acme.test', type: 'work', primary: false },
      { value: 'mo@home.example', type: 'home', primary: false },
    ]);
    // replace without a filter replaces every address; a pathless value too.
    answer = await patch(scim, id, {
      op: 'replace',
      path: 'emails',
      value: [{ value: 'mo@new.example', type: 'work', primary: true }],
    });
    expect(answer.body.emails).toEqual([{ value: 'mo@new.example', type: 'work', primary: true }]);
    answer = await patch(scim, id, {
      op: 'Replace',
      value: { emails: [{ value: 'mo@path.example', type: 'home', primary: 'True' }] },
    });
    expect(answer.body.emails).toEqual([{ value: 'mo@path.example', type: 'home', primary: true }]);
    expect(await emailOf('E-mo')).toBe('mo@path.example');
    // remove without a filter: no address left, a respondent without one.
    answer = await patch(scim, id, { op: 'remove', path: 'emails' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.emails).toBeUndefined();
    expect(await emailOf('E-mo')).toBeNull();
    expect(await emails()).toBeUndefined();
  });

  it('applies nothing when an operation fails', async () => {
    const { scim, emailOf } = await tenant();
    const created = await scim('POST', '/Users', {
      schemas: [core],
      userName: 'al',
      externalId: 'E-al',
      title: 'Clerk',
      emails: [
        { value: 'al@acme.test', type: 'work', primary: true },
        { value: 'al@home.example', type: 'home' },
      ],
    });
    const id = created.body.id as string;
    const before = (await scim('GET', `/Users/${id}`)).body;
    const failing: Array<[unknown, string]> = [
      [{ op: 'replace', path: 'emails[type eq "fax"].value', value: 'x@acme.test' }, 'noTarget'],
      [{ op: 'remove', path: 'emails[type eq "fax"]' }, 'noTarget'],
      [{ op: 'remove' }, 'noTarget'],
      [{ op: 'remove', path: 'userName' }, 'invalidValue'],
      [{ op: 'replace', path: 'emails[type eq "home"].value', value: 'not an address' }, 'invalidValue'],
      [{ op: 'replace', path: 'emails[type eq "home"]', value: 'x' }, 'invalidValue'],
      [{ op: 'add', path: 'emails[type eq "home"].nickname', value: 'x' }, 'invalidPath'],
    ];
    for (const [operation, scimType] of failing) {
      const answer = await patch(
        scim,
        id,
        { op: 'replace', path: 'title', value: 'Changed' },
        { op: 'replace', path: 'emails[type eq "home"].primary', value: true },
        { op: 'remove', path: 'emails[type eq "work"]' },
        operation,
      );
      expectScimError(answer, 400, scimType);
      expect((await scim('GET', `/Users/${id}`)).body, JSON.stringify(operation)).toEqual(before);
      expect(await emailOf('E-al')).toBe('al@acme.test');
    }
  });
});

describe('bulk (RFC 7644 §3.7)', () => {
  it('creates users with and without addresses, patches and deletes them by bulkId', async () => {
    const { scim, emailOf, respondentCount } = await tenant();
    const answer = await scim('POST', '/Bulk', {
      schemas: [bulkRequest],
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'a', data: { userName: 'bulk-a', externalId: 'B-a' } },
        {
          method: 'POST',
          path: '/Users',
          bulkId: 'b',
          data: {
            schemas: [core, enterprise],
            userName: 'bulk-b',
            externalId: 'B-b',
            emails: [
              { value: 'b@acme.test', type: 'work' },
              { value: 'b@home.example', type: 'home', primary: true },
            ],
            [enterprise]: { manager: { value: 'bulkId:a' } },
          },
        },
        {
          method: 'PATCH',
          path: '/Users/bulkId:b',
          data: { schemas: [patchOp], Operations: [{ op: 'remove', path: 'emails[type eq "home"]' }] },
        },
        {
          method: 'PATCH',
          path: '/Users/bulkId:a',
          data: {
            schemas: [patchOp],
            Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'x' }],
          },
        },
        {
          method: 'POST',
          path: '/Users',
          bulkId: 'c',
          data: { userName: 'bulk-c', emails: [{ value: 'b@acme.test' }] },
        },
        { method: 'DELETE', path: '/Users/bulkId:a' },
      ],
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const results = answer.body.Operations as Array<{ status: string; response?: { scimType?: string } }>;
    expect(results.map((r) => r.status)).toEqual(['201', '201', '200', '400', '409', '204']);
    expect(results[3]!.response?.scimType).toBe('noTarget');
    // b's address is an existing respondent's: no copy of that person.
    expect(results[4]!.response?.scimType).toBe('uniqueness');
    expect(await emailOf('B-b')).toBe('b@acme.test');
    const b = (await lookup(scim, 'userName eq "bulk-b"')).body.Resources[0];
    expect(b.emails).toEqual([{ value: 'b@acme.test', type: 'work', primary: false }]);
    expect(b[enterprise].manager).toEqual({ value: 'B-a' });
    expect(await respondentCount()).toBe(1);
  });
});

describe('unknown URLs', () => {
  it('answers a SCIM error in application/scim+json, whatever the path', async () => {
    const { scim } = await tenant();
    for (const path of [
      '/Groups',
      '/Me',
      '/Users/usr_01JD3M8Q4W6T9ZK2F7X1B5N0C8',
      '/Users/a/b',
      '/v3/Users',
      '/Bulk/1',
    ])
      expectScimError(await scim('GET', path), 404);
    const search = await scim('POST', '/Users/.search', { filter: 'userName eq "x"' });
    expect([404, 405]).toContain(search.status);
    expectScimError(search, search.status);
    expectScimError(await scim('PATCH', '/Users', { schemas: [patchOp], Operations: [] }), 405);
  });
});
