/** Respondent operations through the SDK: create-or-replace, read, list with filters, delete, isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ role: 'api' });
});
afterAll(async () => {
  await t.close();
});

const ada = {
  email: 'Ada.Lovelace@Example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  department: 'Engineering',
  location: 'London',
  jobTitle: 'Staff Engineer',
  managerId: 'E-1',
  hireDate: '2021-03-15',
  employmentType: 'full_time' as const,
  attributes: { costCenter: 'CC-4410', remote: true, level: 3 },
};

describe('PUT /respondents/{externalId}', () => {
  it('creates (201), replaces (200) and stores absent fields as null', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const created = await client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-42' } },
      body: ada,
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.data).toMatchObject({
      externalId: 'E-42',
      email: 'Ada.Lovelace@Example.com',
      hireDate: '2021-03-15',
      attributes: ada.attributes,
    });

    const same = await client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-42' } },
      body: ada,
    });
    expect(same.response.status).toBe(200);
    // Repeating the request changes nothing, not even updatedAt.
    expect(same.data?.data.updatedAt).toBe(created.data?.data.updatedAt);

    const replaced = await client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-42' } },
      body: { externalId: 'E-42', email: 'ada@example.com' },
    });
    expect(replaced.response.status).toBe(200);
    expect(replaced.data?.data).toMatchObject({
      email: 'ada@example.com',
      firstName: null,
      department: null,
      hireDate: null,
      employmentType: null,
      attributes: {},
    });
    expect(replaced.data?.data.createdAt).toBe(created.data?.data.createdAt);
  });

  it('refuses a body externalId that differs from the path, and invalid fields, with 400', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const mismatch = await client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-1' } },
      body: { externalId: 'E-2', email: 'a@example.com' },
    });
    expect(mismatch.response.status).toBe(400);
    expect(mismatch.error?.error.details?.[0]?.path).toBe('/body/externalId');
    const bad = await client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-1' } },
      body: { email: 'not-an-email', hireDate: '2021-13-45', attributes: { nested: { no: 1 } } } as never,
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error.code).toBe('validation_failed');
    const unstorable = await client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-1' } },
      body: { email: 'a@example.com', attributes: { note: 'x\u0000y' } },
    });
    expect(unstorable.response.status).toBe(400);
    expect(unstorable.error?.error.details?.[0]?.path).toBe('/body/attributes/note');
  });
});

describe('GET, list and DELETE', () => {
  it('lists with filters and pagination, sorted by externalId', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    const people = [
      {
        id: 'E-3',
        department: 'Sales',
        location: 'Paris',
        firstName: 'Claude',
        email: 'claude@example.com',
        employmentType: 'contractor' as const,
      },
      {
        id: 'E-1',
        department: 'Engineering',
        location: 'London',
        firstName: 'Ada',
        email: 'Ada@Example.com',
        employmentType: 'full_time' as const,
      },
      {
        id: 'E-2',
        department: 'Engineering',
        location: 'Paris',
        firstName: 'Blaise',
        email: 'blaise@example.com',
        employmentType: 'full_time' as const,
      },
    ];
    for (const p of people) {
      await client.unwrap(
        client.PUT('/api/v1/respondents/{externalId}', {
          params: { path: { externalId: p.id } },
          body: {
            email: p.email,
            firstName: p.firstName,
            department: p.department,
            location: p.location,
            employmentType: p.employmentType,
            managerId: p.id === 'E-1' ? null : 'E-1',
          },
        }),
      );
    }
    const all = await client.GET('/api/v1/respondents', { params: { query: { pageSize: 2 } } });
    expect(all.data?.data.map((r) => r.externalId)).toEqual(['E-1', 'E-2']);
    expect(all.data?.pagination).toEqual({ page: 1, pageSize: 2, totalItems: 3, totalPages: 2, hasMore: true });
    const page2 = await client.GET('/api/v1/respondents', { params: { query: { pageSize: 2, page: 2 } } });
    expect(page2.data?.data.map((r) => r.externalId)).toEqual(['E-3']);

    const ids = async (query: Record<string, string>) =>
      (await client.unwrap(client.GET('/api/v1/respondents', { params: { query } }))).map((r) => r.externalId);
    expect(await ids({ department: 'Engineering' })).toEqual(['E-1', 'E-2']);
    expect(await ids({ department: 'Engineering', location: 'Paris' })).toEqual(['E-2']);
    expect(await ids({ employmentType: 'contractor' })).toEqual(['E-3']);
    expect(await ids({ managerId: 'E-1' })).toEqual(['E-2', 'E-3']);
    expect(await ids({ email: 'ada@example.COM' })).toEqual(['E-1']);
    expect(await ids({ search: 'LAIS' })).toEqual(['E-2']);
    expect(await ids({ search: '%' })).toEqual([]);
    const bad = await client.GET('/api/v1/respondents', { params: { query: { employmentType: 'boss' as never } } });
    expect(bad.response.status).toBe(400);
  });

  it('gets and deletes one; a second delete and unknown ids are 404', async () => {
    const { liveKey } = await t.createTenant();
    const client = t.client(liveKey);
    await client.unwrap(
      client.PUT('/api/v1/respondents/{externalId}', {
        params: { path: { externalId: 'E 7/x' } },
        body: { email: 'e7@example.com' },
      }),
    );
    const got = await client.unwrap(
      client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E 7/x' } } }),
    );
    expect(got.email).toBe('e7@example.com');
    const deleted = await client.DELETE('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E 7/x' } },
    });
    expect(deleted.data?.data).toEqual({ id: 'E 7/x', deleted: true });
    const again = await client.DELETE('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E 7/x' } },
    });
    expect(again.response.status).toBe(404);
    const missing = await client.GET('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'nobody' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('not_found');
  });

  it('keeps organizations and environments apart', async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    await t.client(a.liveKey).unwrap(
      t.client(a.liveKey).PUT('/api/v1/respondents/{externalId}', {
        params: { path: { externalId: 'E-1' } },
        body: { email: 'a@example.com' },
      }),
    );
    for (const key of [a.testKey, b.liveKey]) {
      const client = t.client(key);
      expect(
        (await client.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-1' } } })).response
          .status,
      ).toBe(404);
      expect(
        (await client.DELETE('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'E-1' } } })).response
          .status,
      ).toBe(404);
      expect((await client.unwrap(client.GET('/api/v1/respondents', {}))).length).toBe(0);
    }
  });

  it('checks scopes: reads need respondents:read, writes respondents:write', async () => {
    const { organizationId } = await t.createTenant();
    const reader = t.client((await t.createKey(organizationId, { scopes: ['respondents:read'] })).key);
    expect((await reader.GET('/api/v1/respondents', {})).response.status).toBe(200);
    const put = await reader.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-1' } },
      body: { email: 'a@example.com' },
    });
    expect(put.response.status).toBe(403);
    expect(put.error?.error.code).toBe('insufficient_scope');
  });
});
