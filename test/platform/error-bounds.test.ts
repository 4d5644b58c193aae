/**
 * An error's texts stay within the contract's bounds whatever the request echoes into them: `error.message` and each
 * `details[].message` at most 1,000 characters, `details[].path` at most 500 (ErrorDetail, Error), and a SCIM error's
 * `detail` at most 2,000 (ScimError). Long values go in through targeting filters, the analytics `filters` query, an
 * unknown query parameter's name and a SCIM filter; every answer is checked against its documented schema (the
 * server under test validates its responses too, so a text over its bound would be a 500). The one place every
 * envelope passes through (`errorEnvelope`) is checked directly as well.
 */
import type { Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorEnvelope } from '../../server/src/http/envelope.js';
import { ApiError } from '../../server/src/http/errors.js';
import { expectDocumented, raw, type RawReply } from '../helpers/raw-http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createAjv, loadDocument } from '../contract/document.js';

let t: TestService;
let key: string;
let scimKey: string;
let surveyId: string;
beforeAll(async () => {
  t = await startTestService();
  const tenant = await t.createTenant('BUSINESS');
  key = tenant.liveKey;
  scimKey = (await t.createKey(tenant.organizationId, { scopes: ['scim'] })).key;
  const created = await raw(t.url, 'POST', '/api/v1/surveys', {
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Bounds', questions: [{ type: 'nps', text: 'Recommend us?' }] }),
  });
  surveyId = (created.body as { data: { id: string } }).data.id;
});
afterAll(async () => {
  await t?.close();
});

const long = (length: number, unit = 'x') => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

interface ErrorBody {
  error: { code: string; message: string; status: number; details?: Array<{ path?: string; message: string }> };
}

/** The envelope's bounds, and whether any of its texts had to be cut. */
function expectWithinBounds(answer: RawReply): { cut: boolean } {
  const { error } = answer.body as ErrorBody;
  expect(error.message.length).toBeLessThanOrEqual(1_000);
  expect(error.details?.length ?? 0, answer.text.slice(0, 300)).toBeGreaterThan(0);
  let cut = error.message.endsWith('…');
  for (const detail of error.details ?? []) {
    expect(detail.message.length, detail.message.slice(0, 100)).toBeLessThanOrEqual(1_000);
    if (detail.path !== undefined) expect(detail.path.length).toBeLessThanOrEqual(500);
    if (detail.message.endsWith('…') || detail.path?.endsWith('…')) cut = true;
  }
  return { cut };
}

const call = (method: string, path: string, body?: unknown) =>
  raw(t.url, method, path, {
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('error texts within their documented bounds', () => {
  it('a targeting with values of thousands of characters: every detail at most 1,000 characters, valid', async () => {
    const value = long(6_000, '9');
    const answer = await call('POST', `/api/v1/surveys/${surveyId}/distribute/preview`, {
      targeting: {
        filters: [
          { field: 'hireDate', operator: 'equals', value },
          { field: 'hireDate', operator: 'in', value: [value, `😀${value}`] },
          { field: 'department', operator: 'contains', value },
          { field: `attributes.${long(70, 'a')}`, operator: 'equals', value },
          { field: long(5_000, 'f'), operator: 'equals', value: 'x' },
          { field: 'managerId', operator: 'under', value },
        ],
      },
    });
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expectWithinBounds(answer);
    expectDocumented('/api/v1/surveys/{surveyId}/distribute/preview', 'POST', answer);
  });

  it('the analytics filters query with long values: within bounds, valid', async () => {
    const filters = JSON.stringify({
      filters: [
        { field: 'hireDate', operator: 'equals', value: long(4_000, '7') },
        { field: `attributes.${long(3_000, 'k')}`, operator: 'equals', value: 'x' },
        { field: long(3_000, 'g'), operator: 'gte', value: long(3_000, 'v') },
      ],
      logic: 'AND',
    });
    const answer = await call(
      'GET',
      `/api/v1/surveys/${surveyId}/analytics/static?filters=${encodeURIComponent(filters)}`,
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expectWithinBounds(answer);
    expectDocumented('/api/v1/surveys/{id}/analytics/static', 'GET', answer);
  });

  it('an unknown query parameter named by 5,000 characters is cut, not echoed whole, and the answer is valid', async () => {
    const answer = await call('GET', `/api/v1/surveys?${long(5_000, 'z')}=1&${encodeURIComponent(long(3_000, 'é'))}=2`);
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    // The validator names the parameter: the envelope cuts what would exceed the bounds, with an ellipsis.
    expect(expectWithinBounds(answer).cut).toBe(true);
    expectDocumented('/api/v1/surveys', 'GET', answer);
  });

  it('a SCIM refusal echoing a long filter or parameter keeps its detail within 2,000 characters', async () => {
    const validate = createAjv(loadDocument()).getSchema('openapi.json#/components/schemas/ScimError')!;
    const queries = [
      `filter=${encodeURIComponent(`${long(5_000, 'a')} eq "x"`)}`,
      `filter=${encodeURIComponent(`userName eq "${long(5_000)}" and`)}`,
      `sortBy=${long(480, 'b')}`,
      `${long(5_000, 'q')}=1`,
    ];
    for (const query of queries) {
      const answer = await raw(t.url, 'GET', `/scim/v2/Users?${query}`, {
        headers: { authorization: `Bearer ${scimKey}` },
      });
      const where = `${query.slice(0, 40)} → ${answer.status} ${answer.text.slice(0, 200)}`;
      expect(answer.status, where).toBe(400);
      expect(answer.headers['content-type'], where).toMatch(/^application\/scim\+json/);
      const body = answer.body as { detail: string };
      expect(body.detail.length, where).toBeLessThanOrEqual(2_000);
      expect(validate(answer.body), `${where} ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});

describe('errorEnvelope, the one place every error envelope passes through', () => {
  const res = () =>
    ({
      locals: { requestId: 'req_bounds0000' },
      setHeader: () => undefined,
      status() {
        return this;
      },
    }) as unknown as Response;

  it('cuts the message and each detail to 1,000 characters and each path to 500, with an ellipsis', () => {
    const error = new ApiError(400, 'validation_failed', long(5_000, 'm'), [
      { message: long(5_000, 'd'), code: 'format', path: `/body/${long(5_000, 'p')}` },
      { message: 'short', code: 'required' },
      // A cut never splits a surrogate pair: the emoji at the boundary goes whole.
      { message: `${long(998, 'e')}😀${long(10, 'e')}`, code: 'invalid_value' },
    ]);
    const { error: body } = errorEnvelope(res(), error);
    expect(body.message).toHaveLength(1_000);
    expect(body.message.endsWith('…')).toBe(true);
    expect(body.details![0]!.message).toHaveLength(1_000);
    expect(body.details![0]!.path).toHaveLength(500);
    expect(body.details![1]!.message).toBe('short');
    const cut = body.details![2]!.message;
    expect(cut.length).toBeLessThanOrEqual(1_000);
    expect(cut).toBe(`${long(998, 'e')}…`);
    const validate = createAjv(loadDocument()).getSchema('openapi.json#/components/schemas/Error')!;
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  });
});
