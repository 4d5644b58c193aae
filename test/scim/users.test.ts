/**
 * The SCIM server end to end over real HTTP and PostgreSQL: discovery, Users CRUD, filters compiled to SQL,
 * PATCH, ETags, and SCIM errors for bad input (4xx, never 5xx, nothing stored). Responses are validated against
 * the contract by the server under test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  core,
  enterprise,
  errorSchema,
  own,
  patchOp,
  scimTenant,
  user,
  type Scim,
  type ScimAnswer,
} from './scim-helpers.js';

let t: TestService;
let scim: Scim;
let tenant: Awaited<ReturnType<typeof scimTenant>>;
beforeAll(async () => {
  t = await startTestService();
  tenant = await scimTenant(t);
  scim = tenant.live;
});
afterAll(async () => {
  await t.close();
});

const expectScimError = (answer: ScimAnswer, status: number, scimType?: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.schemas).toEqual([errorSchema]);
  expect(answer.body.status).toBe(String(status));
  if (scimType) expect(answer.body.scimType).toBe(scimType);
};

describe('paths no operation has', () => {
  it('answers a SCIM error in application/scim+json under /scim/v2, with a key or without', async () => {
    const base = `${t.url}/scim/v2`;
    const cases: Array<[string, string, number]> = [
      ['GET', '/Nope', 404],
      ['GET', '', 404],
      ['GET', '/', 404],
      ['GET', '/Users/x/y', 404],
      ['POST', '/Groups', 404],
      ['GET', '//Users', 404],
      ['GET', '/Users%2Fx', 404],
      ['DELETE', '/Users', 405],
    ];
    for (const authorization of [`Bearer ${tenant.allKey}`, undefined]) {
      for (const [method, path, status] of cases) {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: authorization ? { authorization } : {},
        });
        const where = `${method} /scim/v2${path} ${authorization ? 'with' : 'without'} a key`;
        // Without a key, a routed operation answers 401; an unknown path its 404 or 405 at once.
        expect(response.status, where).toBe(status);
        expect(response.headers.get('content-type'), where).toMatch(/^application\/scim\+json/);
        const body = (await response.json()) as { schemas: string[]; status: string; detail: string };
        expect(body.schemas, where).toEqual([errorSchema]);
        expect(body.status, where).toBe(String(status));
        if (status === 405) expect(response.headers.get('allow'), where).toContain('GET');
      }
    }
    // Paths are case-sensitive: this is no SCIM path, and gets the API's envelope.
    const miscased = await fetch(`${t.url}/SCIM/v2/Users`);
    expect(miscased.status).toBe(404);
    expect(miscased.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await miscased.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('discovery', () => {
  it('describes the server, its resource type and its schemas', async () => {
    const config = await scim('GET', '/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(config.body.filter).toEqual({ supported: true, maxResults: 1000 });
    expect(config.body.bulk).toMatchObject({ supported: true, maxOperations: 1000, maxPayloadSize: 1048576 });
    expect(config.body.changePassword.supported).toBe(false);
    expect(config.body.etag.supported).toBe(true);
    expect(config.body.sort.supported).toBe(true);
    const types = await scim('GET', '/ResourceTypes');
    expect(types.body.Resources[0]).toMatchObject({ id: 'User', endpoint: '/Users', schema: core });
    const schemas = await scim('GET', '/Schemas');
    expect(schemas.body.Resources.map((s: { id: string }) => s.id)).toEqual([core, enterprise, own]);
  });

  it('reads one resource type and one schema by id, and answers a SCIM 404 for an unknown one', async () => {
    const list = await scim('GET', '/ResourceTypes');
    const user = await scim('GET', '/ResourceTypes/User');
    expect(user.status).toBe(200);
    expect(user.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(user.body).toEqual(list.body.Resources[0]);
    expect(user.body.meta.location).toBe(`${t.url}/scim/v2/ResourceTypes/User`);
    expect(user.body.schemaExtensions).toEqual([
      { schema: enterprise, required: false },
      { schema: own, required: false },
    ]);
    const schemas = await scim('GET', '/Schemas');
    for (const [i, urn] of [core, enterprise, own].entries()) {
      const one = await scim('GET', `/Schemas/${urn}`);
      expect(one.status, urn).toBe(200);
      expect(one.body).toEqual(schemas.body.Resources[i]);
      // Its own location leads back to it.
      expect(one.body.meta.location).toBe(`${t.url}/scim/v2/Schemas/${urn}`);
    }
    const managers = (await scim('GET', `/Schemas/${enterprise}`)).body.attributes.find(
      (a: { name: string }) => a.name === 'manager',
    );
    expect(managers.subAttributes.map((a: { name: string }) => a.name)).toEqual(['value']);
    // Names and URNs are case-insensitive in SCIM.
    expect((await scim('GET', '/ResourceTypes/user')).body.id).toBe('User');
    expect((await scim('GET', `/Schemas/${own.toUpperCase()}`)).body.id).toBe(own);
    for (const path of ['/ResourceTypes/Group', `/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group`, '/Schemas/x']) {
      const missing = await scim('GET', path);
      expectScimError(missing, 404);
      expect(missing.body.scimType).toBeUndefined();
      expect(missing.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    }
    expectScimError(await scim('GET', `/Schemas/${'x'.repeat(300)}`), 400);
  });

  it('answers SCIM errors for a missing key, a key without the scope and an unknown path', async () => {
    const noKey = await fetch(`${t.url}/scim/v2/Users`);
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(((await noKey.json()) as { schemas: string[] }).schemas).toEqual([errorSchema]);
    const key = await t.createKey(tenant.organizationId, { scopes: ['respondents:read'] });
    const forbidden = await fetch(`${t.url}/scim/v2/Users`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { status: string }).status).toBe('403');
    // A path no operation has is a SCIM error too (more spellings under "paths no operation has").
    expectScimError(await scim('GET', '/Groups'), 404);
  });
});

describe('users', () => {
  it('creates, reads, replaces and deletes a user that is a respondent', async () => {
    const created = await scim(
      'POST',
      '/Users',
      user('ada', {
        externalId: 'E-ada',
        title: 'Engineer',
        preferredLanguage: 'en-GB',
        [enterprise]: { department: 'R&D', employeeNumber: '42', manager: { value: 'E-boss' } },
        [own]: { location: 'London', hireDate: '2021-03-15', employmentType: 'full_time', attributes: { level: 3 } },
      }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    expect(id).toMatch(/^usr_/);
    expect(created.headers.get('location')).toBe(`${t.url}/scim/v2/Users/${id}`);
    expect(created.headers.get('etag')).toBe(created.body.meta.version);
    expect(created.body.meta).toMatchObject({ resourceType: 'User', location: `${t.url}/scim/v2/Users/${id}` });
    expect(created.body[enterprise]).toEqual({ department: 'R&D', employeeNumber: '42', manager: { value: 'E-boss' } });

    // The respondent is the same person, through the respondents API.
    const respondent = await fetch(`${t.url}/api/v1/respondents/E-ada`, {
      headers: { authorization: `Bearer ${tenant.allKey}` },
    });
    expect(((await respondent.json()) as { data: unknown }).data).toMatchObject({
      email: 'ada@example.com',
      firstName: 'ada',
      lastName: 'Tester',
      jobTitle: 'Engineer',
      department: 'R&D',
      managerId: 'E-boss',
      location: 'London',
      hireDate: '2021-03-15',
      employmentType: 'full_time',
      attributes: { level: 3 },
    });

    const read = await scim('GET', `/Users/${id}`);
    expect(read.body).toEqual(created.body);

    const replaced = await scim('PUT', `/Users/${id}`, user('ada', { externalId: 'E-ada', title: 'Lead' }));
    expect(replaced.status).toBe(200);
    expect(replaced.body.title).toBe('Lead');
    expect(replaced.body[enterprise]).toBeUndefined();
    expect(replaced.body.meta.version).not.toBe(created.body.meta.version);

    const deleted = await scim('DELETE', `/Users/${id}`);
    expect(deleted.status).toBe(204);
    expectScimError(await scim('GET', `/Users/${id}`), 404);
    const gone = await fetch(`${t.url}/api/v1/respondents/E-ada`, {
      headers: { authorization: `Bearer ${tenant.allKey}` },
    });
    expect(gone.status).toBe(404);
  });

  it('gives a user without externalId its id as externalId, and keeps LIVE and TEST apart', async () => {
    const created = await scim('POST', '/Users', user('noext'));
    expect(created.status).toBe(201);
    expect(created.body.externalId).toBe(created.body.id);
    expectScimError(await tenant.test('GET', `/Users/${created.body.id}`), 404);
    const inTest = await tenant.test('GET', `/Users?filter=${encodeURIComponent('userName eq "noext@example.com"')}`);
    expect(inTest.body.totalResults).toBe(0);
  });

  it('refuses a taken userName (any case) with 409 uniqueness and stores nothing', async () => {
    expect((await scim('POST', '/Users', user('dup'))).status).toBe(201);
    const again = await scim('POST', '/Users', { ...user('dup2'), userName: 'DUP@example.com', externalId: 'E-dup2' });
    expectScimError(again, 409, 'uniqueness');
    const respondent = await fetch(`${t.url}/api/v1/respondents/E-dup2`, {
      headers: { authorization: `Bearer ${tenant.allKey}` },
    });
    expect(respondent.status).toBe(404);
  });

  it('takes hireDate as a date or a SCIM dateTime (kept as its date in UTC), and refuses a malformed one', async () => {
    const cases: Array<[string, string]> = [
      ['2008-01-23T04:56:22Z', '2008-01-23'],
      ['2008-01-23T23:30:00-02:00', '2008-01-24'],
      ['2008-01-23T00:30:00.123456+01:00', '2008-01-22'],
      ['2024-02-29', '2024-02-29'],
    ];
    for (const [index, [given, stored]] of cases.entries()) {
      const created = await scim('POST', '/Users', user(`hired${index}`, { [own]: { hireDate: given } }));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const read = await scim('GET', `/Users/${String(created.body.id)}`);
      expect((read.body[own] as { hireDate: string }).hireDate).toBe(stored);
    }
    // Through PATCH as well, as Entra ID sends it.
    const patched = await scim('POST', '/Users', user('hiredpatch'));
    const id = String(patched.body.id);
    const replaced = await scim('PATCH', `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', path: `${own}:hireDate`, value: '2019-06-30T22:00:00-05:00' }],
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect((replaced.body[own] as { hireDate: string }).hireDate).toBe('2019-07-01');
    for (const malformed of [
      '2008-02-30T04:56:22Z',
      '2008-01-23T25:00:00Z',
      '2008-01-23T04:56:22',
      '2008-01-23 04:56',
    ]) {
      expectScimError(
        await scim('POST', '/Users', user(`badhire${malformed.length}`, { [own]: { hireDate: malformed } })),
        400,
        'invalidValue',
      );
    }
  });

  it('answers bad bodies with SCIM errors, never 5xx', async () => {
    expectScimError(await scim('POST', '/Users', { schemas: [core] }), 400, 'invalidValue');
    expectScimError(
      await scim('POST', '/Users', { userName: 'badmail', emails: [{ value: 'not-an-address' }] }),
      400,
      'invalidValue',
    );
    expectScimError(await scim('POST', '/Users', user('bad', { active: 'maybe' })), 400, 'invalidValue');
    expectScimError(
      await scim('POST', '/Users', user('bad', { [own]: { hireDate: 'yesterday' } })),
      400,
      'invalidValue',
    );
    expectScimError(await scim('POST', '/Users', user('bad', { id: 'usr_mine' })), 400, 'mutability');
    expectScimError(await scim('POST', '/Users', '{"userName":'), 400, 'invalidSyntax');
    expectScimError(await scim('POST', '/Users', [1, 2]), 400);
    const text = await fetch(`${t.url}/scim/v2/Users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.allKey}`, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(text.status).toBe(415);
    expect(((await text.json()) as { schemas: string[] }).schemas).toEqual([errorSchema]);
    // Plain JSON is accepted.
    const plain = await scim('POST', '/Users', user('plain'), { 'content-type': 'application/json' });
    expect(plain.status).toBe(201);
    expectScimError(await scim('GET', '/Users/usr_01JD3M8Q4W6T9ZK2F7X1B5N0C8'), 404);
    expectScimError(await scim('GET', '/Users/not-an-id'), 404);
  });
});

describe('filters, paging, sorting and attributes', () => {
  let scimF: Scim;
  beforeAll(async () => {
    scimF = (await scimTenant(t)).live;
    const people = [
      ['amy', 'Smith', 'Sales', true],
      ['bob', 'Jones', 'Sales', false],
      ['cat', 'Smithers', 'R&D', true],
      ['dan', 'Brown', 'R&D', true],
      ['eve', 'Black', 'Ops', true],
    ] as const;
    for (const [name, family, department, active] of people) {
      const created = await scimF(
        'POST',
        '/Users',
        user(name, {
          name: { givenName: name, familyName: family },
          active,
          [enterprise]: { department },
          [own]: { hireDate: `2020-0${people.findIndex((p) => p[0] === name) + 1}-01` },
        }),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
  });

  const names = async (query: string) => {
    const answer = await scimF('GET', `/Users?${query}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return (answer.body.Resources as Array<{ userName: string }>).map((u) => u.userName.split('@')[0]);
  };
  const filtered = (filter: string) => names(`filter=${encodeURIComponent(filter)}`);

  it('takes the whole grammar', async () => {
    expect(await filtered('userName eq "AMY@example.com"')).toEqual(['amy']);
    expect(await filtered('name.familyName sw "smith"')).toEqual(['amy', 'cat']);
    expect(await filtered('name.familyName ew "S"')).toEqual(['bob', 'cat']);
    expect(await filtered('name.givenName co "A"')).toEqual(['amy', 'cat', 'dan']);
    expect(await filtered('active eq false')).toEqual(['bob']);
    expect(await filtered('active ne true')).toEqual(['bob']);
    expect(await filtered(`${enterprise}:department eq "Sales" and not (active eq false)`)).toEqual(['amy']);
    expect(await filtered(`(${enterprise}:department eq "Ops" or name.familyName eq "brown") and active pr`)).toEqual([
      'dan',
      'eve',
    ]);
    expect(await filtered('emails[type eq "work" and value sw "e"]')).toEqual(['eve']);
    expect(await filtered('emails.value ew "@example.com"')).toHaveLength(5);
    expect(await filtered(`${own}:hireDate gt "2020-03-01"`)).toEqual(['dan', 'eve']);
    expect(await filtered(`${own}:hireDate le "2020-02-01"`)).toEqual(['amy', 'bob']);
    expect(await filtered('meta.created gt "2000-01-01T00:00:00Z"')).toHaveLength(5);
    expect(await filtered('title pr')).toEqual([]);
    expect(await filtered('USERNAME Eq "bob@example.com"')).toEqual(['bob']);
  });

  it('refuses a malformed filter or an unknown attribute with invalidFilter', async () => {
    for (const filter of [
      'userName eq',
      'userName xx "a"',
      '(userName eq "a"',
      'nickName eq "a"',
      'active eq "yes"',
      'active gt true',
    ])
      expectScimError(await scimF('GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    const deep = `${'not ('.repeat(500)}active eq true${')'.repeat(500)}`;
    expectScimError(await scimF('GET', `/Users?filter=${encodeURIComponent(deep)}`), 400, 'invalidFilter');
  });

  it('filters on custom attributes by their value and its JSON type, in SQL', async () => {
    const scimA = (await scimTenant(t)).live;
    const people: Array<[string, Record<string, unknown>]> = [
      ['ann', { costCenter: 'CC-4410', level: 3, remote: true }],
      ['ben', { costCenter: 'cc-4420', level: 10, remote: false }],
      ['col', { costCenter: 'HQ', level: '3', note: '' }],
      ['dee', { level: null }],
      ['eli', {}],
    ];
    for (const [name, attributes] of people) {
      const created = await scimA('POST', '/Users', user(name, { schemas: [core, own], [own]: { attributes } }));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const match = async (filter: string) => {
      const answer = await scimA('GET', `/Users?filter=${encodeURIComponent(filter)}`);
      expect(answer.status, `${filter}: ${JSON.stringify(answer.body)}`).toBe(200);
      return (answer.body.Resources as Array<{ userName: string }>).map((u) => u.userName.split('@')[0]);
    };
    const attr = (key: string) => `${own}:attributes.${key}`;
    // Text ignores case; a number or a boolean matches only values of its own JSON type.
    expect(await match(`${attr('costCenter')} eq "cc-4410"`)).toEqual(['ann']);
    expect(await match(`${attr('costCenter')} sw "CC-44"`)).toEqual(['ann', 'ben']);
    expect(await match(`${attr('costCenter')} co "q"`)).toEqual(['col']);
    expect(await match(`${attr('costCenter')} ew "20"`)).toEqual(['ben']);
    expect(await match(`${attr('costCenter')} gt "cc-4415"`)).toEqual(['ben', 'col']);
    expect(await match(`${attr('costCenter')} ne "HQ"`)).toEqual(['ann', 'ben', 'dee', 'eli']);
    expect(await match(`${attr('level')} eq 3`)).toEqual(['ann']);
    expect(await match(`${attr('level')} eq "3"`)).toEqual(['col']);
    expect(await match(`${attr('level')} ge 3`)).toEqual(['ann', 'ben']);
    expect(await match(`${attr('level')} lt 5.5`)).toEqual(['ann']);
    expect(await match(`${attr('level')} ne 3`)).toEqual(['ben', 'col', 'dee', 'eli']);
    expect(await match(`${attr('remote')} eq false`)).toEqual(['ben']);
    expect(await match(`${attr('remote')} ne true`)).toEqual(['ben', 'col', 'dee', 'eli']);
    // A JSON null, a missing key and an empty string are not present.
    expect(await match(`${attr('level')} pr`)).toEqual(['ann', 'ben', 'col']);
    expect(await match(`${attr('note')} pr`)).toEqual([]);
    expect(await match(`${attr('level')} eq null`)).toEqual(['dee', 'eli']);
    expect(await match(`${own}:attributes pr`)).toEqual(['ann', 'ben', 'col', 'dee']);
    // Keys are data: compared exactly, as respondents keep them; the URN and `attributes` in any case.
    expect(await match(`${attr('CostCenter')} pr`)).toEqual([]);
    expect(await match(`${own.toUpperCase()}:ATTRIBUTES.costCenter eq "hq"`)).toEqual(['col']);
    // With the rest of the grammar.
    expect(
      await match(`${attr('remote')} eq true or (${attr('level')} pr and not (${attr('costCenter')} sw "cc"))`),
    ).toEqual(['ann', 'col']);
    for (const filter of [
      `${attr('level')} co 3`,
      `${attr('remote')} gt false`,
      `${own}:attributes eq "x"`,
      `${attr('a.b')} eq "x"`,
      `${attr('not-a-key')} eq "x"`,
      `${own}:attributes[costCenter eq "HQ"]`,
      'attributes.costCenter eq "HQ"',
    ])
      expectScimError(await scimA('GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
  });

  it('pages with startIndex and count, and sorts', async () => {
    const page = await scimF('GET', '/Users?startIndex=2&count=2&sortBy=name.familyName&sortOrder=descending');
    expect(page.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((u: { name: { familyName: string } }) => u.name.familyName)).toEqual([
      'Smith',
      'Jones',
    ]);
    expect(await names('sortBy=userName&count=2')).toEqual(['amy', 'bob']);
    expect((await scimF('GET', '/Users?count=0')).body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });
    expect((await scimF('GET', '/Users?startIndex=0&count=-3')).body).toMatchObject({ startIndex: 1, itemsPerPage: 0 });
    expectScimError(await scimF('GET', '/Users?sortBy=nickName'), 400);
    const far = await scimF('GET', '/Users?startIndex=900000000000000000000');
    expect(far.status).toBe(200);
    expect(far.body.itemsPerPage).toBe(0);
  });

  it('returns only the attributes asked for, or leaves out the excluded', async () => {
    const only = await scimF(
      'GET',
      `/Users?attributes=userName,name.familyName&filter=${encodeURIComponent('userName eq "amy@example.com"')}`,
    );
    expect(Object.keys(only.body.Resources[0]).sort()).toEqual(['id', 'name', 'schemas', 'userName']);
    expect(only.body.Resources[0].name).toEqual({ familyName: 'Smith' });
    const without = await scimF('GET', `/Users?excludedAttributes=emails,meta&count=1`);
    expect(without.body.Resources[0].emails).toBeUndefined();
    expect(without.body.Resources[0].meta).toBeUndefined();
    expect(without.body.Resources[0].userName).toBeDefined();
  });
});

describe('PATCH and ETags', () => {
  it('adds, replaces and removes, with value paths and filters', async () => {
    // A userName that is no e-mail address: without emails the user would have none.
    const created = await scim('POST', '/Users', user('pat', { title: 'Dev', userName: 'pat' }));
    const id = created.body.id as string;
    const patched = await scim('PATCH', `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [
        { op: 'replace', path: 'emails[type eq "work"].value', value: 'pat.new@example.com' },
        { op: 'add', path: 'name.givenName', value: 'Patricia' },
        { op: 'replace', path: `${enterprise}:department`, value: 'Support' },
        { op: 'add', value: { preferredLanguage: 'fr', [own]: { location: 'Paris' } } },
        { op: 'remove', path: 'title' },
      ],
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.emails).toEqual([{ value: 'pat.new@example.com', type: 'work', primary: true }]);
    expect(patched.body.name.givenName).toBe('Patricia');
    expect(patched.body[enterprise].department).toBe('Support');
    expect(patched.body[own].location).toBe('Paris');
    expect(patched.body.preferredLanguage).toBe('fr');
    expect(patched.body.title).toBeUndefined();

    // Errors: nothing is half-applied.
    const before = (await scim('GET', `/Users/${id}`)).body;
    const attempt = async (op: unknown) =>
      scim('PATCH', `/Users/${id}`, {
        schemas: [patchOp],
        Operations: [{ op: 'replace', path: 'title', value: 'X' }, op],
      });
    expectScimError(await attempt({ op: 'replace', path: 'nickName', value: 'x' }), 400, 'invalidPath');
    expectScimError(await attempt({ op: 'remove', path: 'emails[type eq "home"]' }), 400, 'noTarget');
    expectScimError(await attempt({ op: 'replace', path: 'id', value: 'usr_x' }), 400, 'mutability');
    expectScimError(await attempt({ op: 'replace', path: 'externalId', value: 'other' }), 400, 'mutability');
    expectScimError(await attempt({ op: 'remove', path: 'userName' }), 400, 'invalidValue');
    expectScimError(await attempt({ op: 'remove', path: `${core}:userName` }), 400, 'invalidValue');
    expectScimError(await attempt({ op: 'remove' }), 400, 'noTarget');
    // RFC 7644 §3.5.2.3: a replace through a value filter that matches nothing is noTarget (an add creates it).
    expectScimError(
      await attempt({ op: 'replace', path: 'emails[type eq "home"].value', value: 'pat@home.example' }),
      400,
      'noTarget',
    );
    // Two addresses made primary by one operation: RFC 7643 §2.4 allows one.
    expectScimError(
      await attempt({
        op: 'add',
        path: 'emails',
        value: [
          { value: 'one@example.com', primary: true },
          { value: 'two@example.com', primary: true },
        ],
      }),
      400,
      'invalidValue',
    );
    expectScimError(await attempt({ op: 'jump', path: 'title' }), 400, 'invalidValue');
    expect((await scim('GET', `/Users/${id}`)).body).toEqual(before);
  });

  it('answers 412 to a stale If-Match and changes nothing', async () => {
    const created = await scim('POST', '/Users', user('etag'));
    const id = created.body.id as string;
    const first = created.headers.get('etag')!;
    const changed = await scim(
      'PATCH',
      `/Users/${id}`,
      { schemas: [patchOp], Operations: [{ op: 'replace', path: 'title', value: 'A' }] },
      { 'if-match': first },
    );
    expect(changed.status).toBe(200);
    const stale = await scim('PUT', `/Users/${id}`, user('etag', { title: 'B' }), { 'if-match': first });
    expectScimError(stale, 412);
    expect((await scim('GET', `/Users/${id}`)).body.title).toBe('A');
    expectScimError(await scim('DELETE', `/Users/${id}`, undefined, { 'if-match': first }), 412);
    expect((await scim('DELETE', `/Users/${id}`, undefined, { 'if-match': changed.headers.get('etag')! })).status).toBe(
      204,
    );
  });
});

describe('active', () => {
  it('keeps an inactive user but leaves them out of a distribution preview', async () => {
    const { live, allKey } = await scimTenant(t);
    const a = await live('POST', '/Users', user('in', { externalId: 'E-in' }));
    const b = await live('POST', '/Users', user('out', { externalId: 'E-out' }));
    expect(a.status).toBe(201);
    await live('PATCH', `/Users/${b.body.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${t.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${allKey}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }).then(async (r): Promise<ScimAnswer> => ({ status: r.status, headers: r.headers, body: await r.json() }));
    const survey = await api('POST', '/surveys', {
      title: 'Pulse',
      questions: [{ type: 'nps', text: 'Recommend us?' }],
    });
    const preview = await api('POST', `/surveys/${survey.body.data.id}/distribute/preview`, {
      targeting: { filters: [] },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.data.sample.map((r: { externalId: string }) => r.externalId)).toEqual(['E-in']);
    expect((await api('GET', '/respondents/E-out')).status).toBe(200);
  });
});
