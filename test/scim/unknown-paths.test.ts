/**
 * Every refusal under `/scim/v2` is a SCIM error (RFC 7644 §3.12) in `application/scim+json`, also of a path or method
 * no operation has, in every spelling of a path (doubled, trailing and percent-encoded slashes, `.` and `..`
 * segments, other letter case after the base, an absolute request target). Routing and authentication agree for
 * every spelling: without a key an unknown path or method is 404 / 405 at once; with a key, the key's checks come
 * first (401, 403 plan), then 404 / 405 — never the envelope, and never a scope check (no operation, no scope).
 * Answers are validated against the contract's ScimError schema and the documented 405.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { underScimBase } from '../../server/src/modules/scim/errors.js';
import { raw, type RawReply } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createAjv, loadDocument, type JsonObject } from '../contract/document.js';
import { errorSchema } from './scim-helpers.js';

const document = loadDocument();
const validateScimError = createAjv(document).getSchema('openapi.json#/components/schemas/ScimError')!;
const responses = (document.components as JsonObject).responses as JsonObject;

let t: TestService;
const keys: Record<string, string | undefined> = {};
beforeAll(async () => {
  // Many deliberate 401s from one address: the failure budget must not turn them into 429s.
  t = await startTestService({ authFailuresPerMinute: 1_000_000 });
  const organizationId = await t.createOrganization('BUSINESS');
  const free = await t.createOrganization('FREE');
  keys.none = undefined;
  keys.scim = (await t.createKey(organizationId, { scopes: ['scim'] })).key;
  keys.noScope = (await t.createKey(organizationId, { scopes: ['surveys:read'] })).key;
  keys.unknown = `svc_live_${'0'.repeat(64)}`;
  keys.malformed = 'not-a-key';
  keys.free = (await t.createKey(free, { scopes: ['scim'] })).key;
});
afterAll(async () => {
  await t?.close();
});

const send = (method: string, path: string, key: string | undefined, body?: string) =>
  raw(t.url, method, path, {
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
    },
    ...(body === undefined ? {} : { body }),
  });

/** A SCIM error as the contract documents it: the status's media type, the ScimError schema, `status` a string. */
function expectScimError(answer: RawReply, status: number, where: string): void {
  expect(answer.status, `${where}: ${answer.text.slice(0, 200)}`).toBe(status);
  expect(answer.headers['content-type'], where).toMatch(/^application\/scim\+json; charset=utf-8$/);
  const body = answer.body as { schemas: string[]; status: string; detail: string };
  expect(body.schemas, where).toEqual([errorSchema]);
  expect(body.status, where).toBe(String(status));
  expect(validateScimError(body), `${where}: ${JSON.stringify(validateScimError.errors)}`).toBe(true);
  const documented = (status === 405 ? responses.ScimMethodNotAllowed : responses.ScimError) as JsonObject;
  expect(Object.keys(documented.content as JsonObject), where).toEqual(['application/scim+json']);
  if (status === 401) expect(answer.headers['www-authenticate'], where).toMatch(/^Bearer/);
}

/** Paths under the SCIM base URL that no operation has, as sent on the wire. */
const unknownPaths: Array<[string, string]> = [
  ['GET', '/scim/v2/Nope'],
  ['GET', '/scim/v2'],
  ['GET', '/scim/v2/'],
  ['GET', '/scim/v2/Users/x/y'],
  ['GET', '/scim/v2/Groups'],
  ['POST', '/scim/v2/Groups'],
  ['GET', '/scim/v2/Groups/abc'],
  ['GET', '/scim/v2//Users'],
  ['GET', '//scim/v2/Users'],
  ['GET', '/scim/v2/Users/'],
  ['GET', '/scim/v2/users'],
  ['GET', '/scim/v2/USERS'],
  ['GET', '/scim/v2/Users%2Fx'],
  ['GET', '/scim/v2/Users%2fx%2fy'],
  ['GET', '/scim/v2%2FUsers'],
  ['GET', '/scim%2Fv2/Users'],
  ['GET', '/scim/v2/%55sers'],
  ['GET', '/%73cim/v2/Users'],
  ['GET', '/scim/./v2/Users'],
  ['GET', '/scim/v2/./Users'],
  ['GET', '/scim/v2/Users/../Users'],
  ['GET', '/scim/v2/%2e%2e/v2/Users'],
  ['GET', '/api/v1/../../scim/v2/Users'],
  ['GET', '/scim/v2/Users/%2e'],
  ['GET', '/scim/v2/Users/abc%ZZ'],
  ['GET', '/scim/v2/ServiceProviderConfig/'],
  ['POST', '/scim/v2/Bulk/x'],
  ['DELETE', '/scim/v2/Schemas/x/y'],
];

/** Paths that exist, with a method they do not have, and the `Allow` they answer. */
const wrongMethods: Array<[string, string, string]> = [
  ['DELETE', '/scim/v2/Users', 'GET, POST'],
  ['PATCH', '/scim/v2/Users', 'GET, POST'],
  ['POST', '/scim/v2/Users/abc', 'GET, PUT, PATCH, DELETE'],
  ['PUT', '/scim/v2/ServiceProviderConfig', 'GET'],
  ['GET', '/scim/v2/Bulk', 'POST'],
  ['OPTIONS', '/scim/v2/Schemas', 'GET'],
];

describe('a path or method no SCIM operation has', () => {
  it('is a SCIM 404 in application/scim+json, for every spelling, with a valid key or without one', async () => {
    for (const keyName of ['scim', 'none', 'noScope']) {
      for (const [method, path] of unknownPaths) {
        const body = method === 'POST' ? '{}' : undefined;
        expectScimError(await send(method, path, keys[keyName], body), 404, `${method} ${path} (key: ${keyName})`);
      }
    }
  });

  it('is a SCIM 405 with Allow for a path that exists with other methods', async () => {
    for (const keyName of ['scim', 'none', 'noScope']) {
      for (const [method, path, allow] of wrongMethods) {
        const where = `${method} ${path} (key: ${keyName})`;
        const answer = await send(method, path, keys[keyName]);
        expectScimError(answer, 405, where);
        expect(answer.headers.allow, where).toBe(allow);
      }
    }
  });

  it('meets a presented key’s checks first, as SCIM errors: 401 for a bad key and 403 for a plan, in every spelling', async () => {
    const every: Array<[string, string]> = [
      ['GET', '/scim/v2/Users'],
      ...unknownPaths,
      ...wrongMethods.map(([method, path]): [string, string] => [method, path]),
    ];
    for (const [keyName, status] of [
      ['unknown', 401],
      ['malformed', 401],
      ['free', 403],
    ] as const) {
      for (const [method, path] of every) {
        const body = method === 'POST' ? '{}' : undefined;
        expectScimError(await send(method, path, keys[keyName], body), status, `${method} ${path} (key: ${keyName})`);
      }
    }
    // The canonical spelling without a key is the SCIM 401 of its operation; a key without the scope is 403.
    expectScimError(await send('GET', '/scim/v2/Users', undefined), 401, 'GET /scim/v2/Users without a key');
    expectScimError(await send('GET', '/scim/v2/Users', keys.noScope), 403, 'GET /scim/v2/Users without the scope');
  });

  it('answers an absolute request target and a URL over the limit under /scim/v2 as SCIM errors', async () => {
    const origin = new URL(t.url).origin;
    expectScimError(await send('GET', `${origin}/scim/v2/Nope`, undefined), 404, 'absolute-form target');
    const tooLong = await send('GET', `/scim/v2/Users?filter=${'a'.repeat(70_000)}`, keys.scim);
    expectScimError(tooLong, 414, 'a URL over 64 KiB');
    expectScimError(await send('GET', `/scim/v2/${'n'.repeat(70_000)}`, undefined), 414, 'a long unknown path');
  });

  it('leaves paths outside /scim/v2 to the API’s envelope (paths are case-sensitive)', async () => {
    for (const path of ['/SCIM/v2/Users', '/scim/V2/Users', '/scim/v3/Users', '/scimv2/Users', '/scim']) {
      const answer = await send('GET', path, undefined);
      expect(answer.status, path).toBe(404);
      expect(answer.headers['content-type'], path).toMatch(/^application\/json/);
      expect((answer.body as { error: { code: string } }).error.code, path).toBe('not_found');
    }
  });
});

describe('underScimBase', () => {
  it('reads the path as it means, not as it is spelled', () => {
    for (const path of [
      '/scim/v2',
      '/scim/v2/',
      '/scim/v2/Users',
      '/scim/v2//Users',
      '//scim//v2',
      '/scim%2Fv2/Users',
      '/scim%2fv2%2FUsers',
      '/%73%63%69%6d/%76%32',
      '/scim/./v2/x',
      '/x/../scim/v2/Users',
      'http://example.com/scim/v2/Users',
    ])
      expect(underScimBase(path), path).toBe(true);
    for (const path of [
      '/',
      '/scim',
      '/scim/v2/..',
      '/scim/v2/../../api/v1/surveys',
      '/SCIM/v2/Users',
      '/scim/V2/Users',
      '/scim/v20/Users',
      '/scimv2',
      '/api/v1/scim/v2/Users',
      '/scim%252Fv2/Users',
    ])
      expect(underScimBase(path), path).toBe(false);
  });
});
