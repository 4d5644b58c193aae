/**
 * The 19 operations of the specification's Endpoints table exist with their exact method and path.
 * (`../shared/seed/survey-service-api-v1.md`; the contract may add operations, never move these.)
 */
import { describe, expect, it } from 'vitest';
import { loadDocument, operations } from './document.js';

const SEED: ReadonlyArray<readonly [method: string, path: string]> = [
  ['get', '/api/v1/surveys'],
  ['post', '/api/v1/surveys'],
  ['post', '/api/v1/surveys/generate'],
  ['post', '/api/v1/surveys/{id}/launch'],
  ['post', '/api/v1/surveys/{id}/pause'],
  ['get', '/api/v1/surveys/{id}/responses'],
  ['post', '/api/v1/surveys/{id}/responses'],
  ['post', '/api/v1/surveys/{id}/responses/export'],
  ['get', '/api/v1/surveys/{id}/analytics/static'],
  ['post', '/api/v1/surveys/{id}/analytics/ai/generate'],
  ['get', '/api/v1/surveys/{id}/analytics/smart'],
  ['post', '/api/v1/webhooks'],
  ['get', '/api/v1/webhooks/{id}/deliveries'],
  ['get', '/api/v1/api-keys'],
  ['post', '/api/v1/api-keys'],
  ['delete', '/api/v1/api-keys/{id}'],
  ['post', '/api/v1/respondents/sync'],
  ['get', '/api/v1/respondents/sync/{jobId}'],
  ['post', '/api/v1/surveys/{surveyId}/distribute'],
];

const present = new Set(operations(loadDocument()).map((op) => `${op.method} ${op.path}`));

describe('seed operations', () => {
  it('are 19', () => expect(SEED).toHaveLength(19));
  it.each(SEED.map(([method, path]) => [method.toUpperCase(), path, method] as const))(
    '%s %s is in the contract',
    (_m, path, method) => {
      expect(present.has(`${method} ${path}`)).toBe(true);
    },
  );
});
