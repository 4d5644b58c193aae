/** Real HTTP to the SCIM server under test: a tenant with a `scim` key, and requests in SCIM's media type. */
import type { TestService } from '../helpers/service.js';

export const core = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const enterprise = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const own = 'urn:ietf:params:scim:schemas:extension:survey-service:2.0:User';
export const patchOp = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const errorSchema = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimAnswer {
  status: number;
  headers: Headers;
  // SCIM bodies are checked by the server's response validation; tests read them freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export type Scim = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<ScimAnswer>;

/** A SCIM client for `key` against the service: paths are relative to `/scim/v2`. */
export function scimClient(t: TestService, key: string): Scim {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${t.url}/scim/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        accept: 'application/scim+json',
        ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}

/** An organization whose limits tests cannot spend, with a `scim` key per environment and a `*` key. */
export async function scimTenant(t: TestService) {
  const organizationId = await t.createOrganization('BUSINESS');
  await t.db
    .updateTable('organizations')
    .set({ rate_limit_per_minute: 1_000_000, rate_limit_per_day: 10_000_000 })
    .where('id', '=', organizationId)
    .execute();
  const live = await t.createKey(organizationId, { environment: 'LIVE', scopes: ['scim'] });
  const test = await t.createKey(organizationId, { environment: 'TEST', scopes: ['scim'] });
  const all = await t.createKey(organizationId, { environment: 'LIVE', scopes: ['*'] });
  return { organizationId, live: scimClient(t, live.key), test: scimClient(t, test.key), allKey: all.key };
}

export function user(name: string, extra: Record<string, unknown> = {}) {
  return {
    schemas: [core, enterprise],
    userName: `${name}@example.com`,
    name: { givenName: name, familyName: 'Tester' },
    emails: [{ value: `${name}@example.com`, type: 'work', primary: true }],
    ...extra,
  };
}

/** A filtered list of users: the filter as an identity provider sends it (URL-encoded, with paging). */
export const lookup = (scim: Scim, filter: string) =>
  scim('GET', `/Users?filter=${encodeURIComponent(filter)}&startIndex=1&count=100`);

export interface ApiAnswer {
  status: number;
  // The envelope's data, read freely by tests (the server validates it against the contract).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** The service's own API (`/api/v1`) with `key`, as an HR system calls it. */
export function apiClient(t: TestService, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const response = await fetch(`${t.url}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}
