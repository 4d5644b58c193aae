/**
 * What the SDK's types refuse, checked by the real compiler on consumer code: a sync record with a typo, a wrong
 * type or no `externalId`, a `segmentBy` that is no field, and analytics filters with an operator analytics refuse.
 * Each wrong snippet must fail with the diagnostic that names its mistake, and the right one must compile.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { typeCheck } from '../helpers/typecheck.js';

type Enum = { enum?: string[] };
const schemas = (
  JSON.parse(readFileSync('openapi/bundled/openapi.json', 'utf8')) as {
    components: { schemas: Record<string, { anyOf: Enum[] }> };
  }
).components.schemas;

const prelude = `
import { createClient, TimeoutError, type AnalyticsSegmentBy, type SyncRecord } from '@survey-service/sdk';
const client = createClient({ apiKey: 'svc_test_x', baseUrl: 'https://api.example.com' });
const surveyId = 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8';
void surveyId;
`;

describe('the SDK types what it sends', () => {
  it('compiles typed sync records, filters objects or text, documented segmentBy values and onRetry', () => {
    const code = `${prelude}
const records: SyncRecord[] = [{ externalId: 'E-1', email: 'ada@example.com', department: 'R&D', managerId: null, attributes: { team: 'core' } }];
void client.respondents.sync({ mode: 'replace', respondents: records, dryRun: true });
void client.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 'E-2', email: 'b@example.com', employmentType: 'full_time' }] });
const segments: AnalyticsSegmentBy[] = ['department', 'location', 'jobTitle', 'employmentType', 'managerId', 'tenure', 'attributes.team', 'managerTree'];
void segments;
void client.analytics.static(surveyId, { segmentBy: 'attributes.costCenter', filters: { filters: [{ field: 'department', operator: 'in', value: ['Sales', 'Ops'] }], logic: 'OR' } });
void client.analytics.static(surveyId, { filters: '{"filters":[]}', segmentBy: 'managerTree', manager: 'E-1' });
void client.analytics.smart(surveyId, { segmentBy: 'tenure', filters: { filters: [{ field: 'hireDate', operator: 'gte', value: '2024-01-01' }] } });
createClient({
  apiKey: 'k', baseUrl: 'https://api.example.com',
  retry: { onRetry: ({ attempt, delayMs, error, response, method, url }) => console.log(attempt, delayMs, error, response?.status, method, url) },
});
export function why(error: unknown): unknown { return error instanceof TimeoutError ? error.cause : undefined; }
`;
    expect(typeCheck([{ name: 'right', code }])).toEqual([]);
  });

  it('names exactly the segmentBy values of the contract (the generator widens them to string)', () => {
    const fields = schemas.SmartAnalyticsSegmentBy!.anyOf.flatMap((s) => s.enum ?? []);
    const extra = schemas.StaticAnalyticsSegmentBy!.anyOf.flatMap((s) => s.enum ?? []);
    expect(fields).toContain('tenure');
    expect(extra).toEqual(['managerTree']);
    const code = `import type { AnalyticsSegmentBy, SegmentField } from '@survey-service/sdk';
type Contract = ${fields.map((f) => JSON.stringify(f)).join(' | ')};
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const fields: Same<SegmentField, Contract> = true;
export const all: Same<AnalyticsSegmentBy, Contract | ${extra.map((f) => JSON.stringify(f)).join(' | ')} | \`attributes.\${string}\`> = true;
`;
    expect(typeCheck([{ name: 'segment-fields', code }])).toEqual([]);
  });

  it.each([
    [
      'a misspelt field of a sync record',
      `void client.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 'E-1', email: 'a@example.com', departmnet: 'x' }] });`,
      /'departmnet' does not exist in type 'SyncRecord'/,
    ],
    [
      'a number as externalId',
      `void client.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 1, email: 'a@example.com' }] });`,
      /Type 'number' is not assignable to type 'string'/,
    ],
    [
      'a number as email',
      `void client.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 'E-1', email: 42 }] });`,
      /Type 'number' is not assignable to type 'string'/,
    ],
    [
      'a record without externalId',
      `void client.respondents.sync({ mode: 'upsert', respondents: [{ email: 'a@example.com' }] });`,
      /Property 'externalId' is missing/,
    ],
    [
      'an untyped array of records',
      `const rows: Record<string, unknown>[] = []; void client.respondents.sync({ mode: 'upsert', respondents: rows });`,
      /is not assignable to type 'readonly SyncRecord\[\]'/,
    ],
    [
      'a misspelt segmentBy of static analytics',
      `void client.analytics.static(surveyId, { segmentBy: 'departement' });`,
      /Type '"departement"' is not assignable to type 'AnalyticsSegmentBy/,
    ],
    [
      'a misspelt segmentBy of smart analytics',
      `void client.analytics.smart(surveyId, { segmentBy: 'attribute.team' });`,
      /Type '"attribute.team"' is not assignable to type 'AnalyticsSegmentBy/,
    ],
    [
      'the under operator, which analytics refuse',
      `void client.analytics.static(surveyId, { filters: { filters: [{ field: 'managerId', operator: 'under', value: 'E-1' }] } });`,
      /Type '"under"' is not assignable/,
    ],
    [
      'a filters object without its filters array',
      `void client.analytics.static(surveyId, { filters: { logic: 'AND' } });`,
      /Property 'filters' is missing/,
    ],
  ])('refuses %s', (name, line, expected) => {
    const diagnostics = typeCheck([{ name: name.replace(/\s+/g, '-'), code: `${prelude}\n${line}\n` }]);
    expect(diagnostics, diagnostics.join('\n')).toHaveLength(1);
    expect(diagnostics[0]).toMatch(expected);
  });
});
