/**
 * The rules every operation of the contract follows (see `/work/briefs/common.md` and
 * `../shared/design/api-conventions.md`): naming, one tag, prose, one scope, examples, the success envelope with
 * its headers, and the shared error responses that apply to the operation's shape.
 */
import { describe, expect, it } from 'vitest';
import { deref, isObject, loadDocument, operations, type Json, type JsonObject, type Operation } from './document.js';

const doc = loadDocument();
const ops = operations(doc);
const hooks = operations(doc, 'webhooks');

const VERBS = [
  'list',
  'get',
  'create',
  'update',
  'delete',
  'upsert',
  'launch',
  'pause',
  'close',
  'submit',
  'export',
  'download',
  'generate',
  'distribute',
  'preview',
  'send',
  'redeliver',
  'revoke',
  'start',
  'rotate',
  'replace',
  'patch',
];
const PUBLIC = new Set(['getOpenApiDocument', 'getLiveness', 'getReadiness']);
const ANY_KEY = new Set(['getMe']);
/** Success bodies that are a document or a file, not an envelope (each operation says why). */
const NOT_ENVELOPED = new Set([
  'getOpenApiDocument',
  'downloadExport',
  'downloadDistributionRecipients',
  'downloadPrivacyRequest',
]);
/**
 * The SCIM server (RFC 7644) answers its own bodies, not the envelope: its routed refusals are `ScimError`s, its
 * lists page by `startIndex` and `count`, and its operations are named after SCIM's methods (`replace`, `patch`).
 */
const isScim = (op: Operation) => op.path.startsWith('/scim/');
/** Every refusal under /scim/v2 is a SCIM error, routed or not; only a request too large to read (431) is not. */
const SCIM_OWN: Record<string, string> = { '405': 'ScimMethodNotAllowed', '431': 'RequestHeaderFieldsTooLarge' };
const SHARED: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '409': 'Conflict',
  '405': 'MethodNotAllowed',
  '413': 'PayloadTooLarge',
  '414': 'UriTooLong',
  '415': 'UnsupportedMediaType',
  '429': 'TooManyRequests',
  '431': 'RequestHeaderFieldsTooLarge',
  '500': 'InternalError',
  '503': 'ServiceUnavailable',
};

const scopeEnum = (() => {
  const scope = deref(doc, { $ref: '#/components/schemas/Scope' });
  return new Set(isObject(scope) && Array.isArray(scope.enum) ? scope.enum : []);
})();

const id = (op: Operation) => String(op.operation.operationId ?? `${op.method} ${op.path}`);
const table = ops.map((op) => [id(op), op] as const);

function jsonContent(holder: Json | undefined): JsonObject | undefined {
  const resolved = deref(doc, holder);
  if (!isObject(resolved) || !isObject(resolved.content)) return undefined;
  const media = resolved.content['application/json'];
  return isObject(media) ? media : undefined;
}
const hasExample = (media: JsonObject) =>
  'example' in media || (isObject(media.examples) && Object.keys(media.examples).length > 0);

function expectedErrors(op: Operation): string[] {
  const o = op.operation;
  const authenticated = !PUBLIC.has(id(op));
  const hasJsonBody = jsonContent(o.requestBody) !== undefined;
  const hasPathId = op.parameters.some((p) => p.in === 'path');
  const codes = new Set<string>();
  // Every operation: unknown query parameters (400), another method on its path (405), a URL too long (414) or a
  // request line and headers larger than the server reads (431), our fault (500), and an unreachable database or
  // a shutdown (503).
  ['400', '405', '414', '431', '500', '503'].forEach((c) => codes.add(c));
  if (authenticated) ['401', '403', '429'].forEach((c) => codes.add(c));
  if (hasPathId) codes.add('404');
  if (op.method === 'post') codes.add('409');
  if (hasJsonBody) {
    codes.add('413');
    codes.add('415');
  }
  return [...codes].sort();
}

describe('operations', () => {
  it('the document has the 48 operations of v1', () => expect(ops.length).toBeGreaterThanOrEqual(48));

  it('operationIds are unique', () => {
    const ids = ops.map(id);
    expect(ids.filter((x, i) => ids.indexOf(x) !== i)).toEqual([]);
  });

  describe.each(table)('%s', (opId, op) => {
    const o = op.operation;

    it('has a camelCase, verb-first operationId, one tag, a summary and a real description', () => {
      expect(opId).toMatch(/^[a-z]+[A-Z][A-Za-z0-9]*$/);
      expect(VERBS).toContain(opId.match(/^[a-z]+/)?.[0]);
      expect(Array.isArray(o.tags) && o.tags.length).toBe(1);
      expect(typeof o.summary === 'string' && o.summary.length > 0 && !/TODO/.test(o.summary)).toBe(true);
      expect(typeof o.description).toBe('string');
      expect(String(o.description).length).toBeGreaterThan(40);
      expect(String(o.description)).not.toMatch(/TODO|Not specified yet/);
    });

    it('declares its security: public, any key, or known scopes (all required)', () => {
      expect(Array.isArray(o.security)).toBe(true);
      const security = o.security as Json[];
      if (PUBLIC.has(opId)) {
        expect(security).toEqual([]);
        return;
      }
      expect(security).toHaveLength(1);
      const requirement = security[0];
      expect(isObject(requirement) && Object.keys(requirement)).toEqual(['bearerAuth']);
      const scopes = isObject(requirement) ? requirement.bearerAuth : undefined;
      if (ANY_KEY.has(opId)) {
        expect(scopes).toEqual([]);
      } else {
        expect(Array.isArray(scopes) && scopes.length > 0).toBe(true);
        for (const scope of scopes as Json[]) expect(scopeEnum.has(scope)).toBe(true);
      }
    });

    it('lists the shared error responses that apply to it', () => {
      const responses = isObject(o.responses) ? o.responses : {};
      for (const code of expectedErrors(op)) {
        const shared = isScim(op) ? (SCIM_OWN[code] ?? 'ScimError') : SHARED[code];
        expect(responses[code], `response ${code}`).toEqual({ $ref: `#/components/responses/${shared}` });
      }
      // Every operation is implemented: none may promise 501.
      expect(responses['501'], 'response 501').toBeUndefined();
    });

    it('answers 2xx in the envelope, with its headers and at least one example', () => {
      const responses = isObject(o.responses) ? o.responses : {};
      const success = Object.keys(responses).filter((code) => code.startsWith('2'));
      expect(success.length).toBeGreaterThan(0);
      const isList = op.parameters.some((p) => p.name === 'page' && p.in === 'query');
      for (const code of success) {
        const response = deref(doc, responses[code]);
        expect(isObject(response)).toBe(true);
        if (!isObject(response)) continue;
        const headers = isObject(response.headers) ? Object.keys(response.headers) : [];
        expect(headers, `${code} headers`).toContain('X-Request-Id');
        if (!PUBLIC.has(opId)) {
          expect(headers, `${code} headers`).toEqual(
            expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
          );
        }
        const media = jsonContent(response);
        if (!media) continue; // a file download
        expect(hasExample(media), `${code} example`).toBe(true);
        if (NOT_ENVELOPED.has(opId)) continue; // the document or a file itself, deliberately not enveloped
        const schema = deref(doc, media.schema);
        expect(isObject(schema) && schema.type).toBe('object');
        if (!isObject(schema)) continue;
        expect(schema.additionalProperties).toBe(false);
        expect(schema.required).toEqual(
          expect.arrayContaining(isList ? ['data', 'meta', 'pagination'] : ['data', 'meta']),
        );
        const properties = isObject(schema.properties) ? schema.properties : {};
        expect(properties.meta).toEqual({ $ref: '#/components/schemas/Meta' });
        if (isList) expect(properties.pagination).toEqual({ $ref: '#/components/schemas/Pagination' });
      }
    });

    it('has a named, exemplified JSON request body when it takes one, and Idempotency-Key on POST', () => {
      if (o.requestBody !== undefined) {
        const media = jsonContent(o.requestBody);
        expect(media).toBeDefined();
        if (media) {
          expect(hasExample(media)).toBe(true);
          expect(isObject(media.schema) && typeof media.schema.$ref).toBe('string');
        }
      }
      if (op.method === 'post') {
        expect(op.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')).toBe(true);
      }
    });

    // Lists take page and pageSize, or (the audit log, a list that grows while it is read) cursor and limit.
    it('lists take page and pageSize, or cursor and limit', () => {
      if (!opId.startsWith('list') || isScim(op)) return;
      const names = op.parameters.map((p) => p.name);
      expect(names).toEqual(
        expect.arrayContaining(names.includes('cursor') ? ['cursor', 'limit', 'order'] : ['page', 'pageSize']),
      );
    });
  });
});

describe('webhooks section', () => {
  it('documents every event type', () => {
    const eventType = deref(doc, { $ref: '#/components/schemas/EventType' });
    const types = isObject(eventType) && Array.isArray(eventType.enum) ? eventType.enum : [];
    expect(types.length).toBeGreaterThan(0);
    expect(Object.keys(isObject(doc.webhooks) ? doc.webhooks : {}).sort()).toEqual([...types].sort());
  });

  it.each(hooks.map((h) => [h.path, h] as const))('%s: a signed POST with an exemplified payload', (_name, hook) => {
    expect(hook.method).toBe('post');
    expect(hook.parameters.map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    const media = jsonContent(hook.operation.requestBody);
    expect(media && hasExample(media)).toBe(true);
    expect(String(hook.operation.description)).toContain('Standard Webhooks');
  });
});
