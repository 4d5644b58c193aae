/** Every operation carries generated `x-codeSamples` (curl and the SDK), and the SDK samples compile. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { methodNames, sampleEnvironment } from '../../scripts/generate-sdk.js';
import { typeCheck } from '../helpers/typecheck.js';

type Sample = { lang: string; label: string; source: string };
const bundle = JSON.parse(readFileSync('openapi/bundled/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; 'x-codeSamples'?: Sample[] }>>;
};
const operations = Object.entries(bundle.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, op]) => typeof op === 'object' && op.operationId)
    .map(([method, op]) => ({ path, method, ...op })),
);

describe('x-codeSamples', () => {
  it('gives every operation a curl and an SDK sample using the documented variables', () => {
    expect(operations.length).toBeGreaterThanOrEqual(48);
    for (const op of operations) {
      const samples = op['x-codeSamples'] ?? [];
      expect(
        samples.map((s) => s.label),
        op.operationId,
      ).toEqual(['curl', 'SDK']);
      expect(samples[0]!.source).toContain(`curl -X ${op.method.toUpperCase()} "$${sampleEnvironment.baseUrl}`);
      expect(samples[1]!.source).toContain(`client.${methodNames[op.operationId!]}(`);
      // Every POST that takes an Idempotency-Key shows one, as Getting started asks.
      const takesKey = JSON.stringify(bundle.paths[op.path]![op.method]).includes('IdempotencyKey');
      expect(samples[0]!.source.includes('-H "Idempotency-Key: $(uuidgen)"'), op.operationId).toBe(takesKey);
      expect(samples[1]!.source).toContain(`process.env.${sampleEnvironment.apiKey}`);
    }
  });

  it('SDK samples type-check against the SDK', { timeout: 120_000 }, () => {
    const problems = typeCheck(
      operations.map((op) => ({ name: op.operationId!, code: op['x-codeSamples']![1]!.source })),
    );
    expect(problems).toEqual([]);
  });
});

describe('the snippet type-checker', () => {
  it('reports a wrong call (so a passing check means something)', { timeout: 120_000 }, () => {
    const problems = typeCheck([
      {
        name: 'wrong',
        code: "import { createClient } from '@survey-service/sdk';\nconst client = createClient({ apiKey: 'k', baseUrl: 'u' });\nawait client.surveys.get(42);\n",
      },
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^wrong:3: Argument of type 'number'/);
  });
});
