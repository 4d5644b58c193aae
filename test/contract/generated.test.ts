/**
 * The generated files are current: running the same tools as `scripts/generate.ts` (`redocly bundle`, then
 * `openapi-typescript` on the bundle) into a temporary directory gives exactly the committed outputs, and the
 * SDK ships the same bundle. CI fails here when someone edits `openapi/` and forgets `npm run generate`. Likewise
 * `docs/schema.sql`: the schema of a freshly migrated throw-away database, described again, is the committed
 * file (a new migration without `npm run generate` fails here).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle, generateTypes } from '../../scripts/generate.js';
import { dumpSchema, schemaTarget } from '../../scripts/schema-dump.js';
import { bundlePath, root } from './document.js';

const read = (path: string) => readFileSync(path, 'utf8');
let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'contract-generated-'));
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('generated files', () => {
  it('openapi/bundled/openapi.json is the bundle of openapi/openapi.yaml', () => {
    const fresh = join(dir, 'openapi.json');
    bundle(fresh);
    expect(read(fresh) === read(bundlePath), 'the bundle is stale: run `npm run generate`').toBe(true);
  }, 120_000);

  it('sdk/openapi.json is the same bundle', () => {
    expect(read(join(root, 'sdk', 'openapi.json')) === read(bundlePath), 'run `npm run generate`').toBe(true);
  });

  it.each(['server/src/generated/openapi.ts', 'sdk/src/generated/openapi.ts'])(
    '%s is generated from the bundle',
    (target) => {
      // The same command and options as scripts/generate.ts, written elsewhere.
      const fresh = join(dir, target.replace(/\//g, '_'));
      generateTypes('openapi/bundled/openapi.json', fresh);
      expect(read(fresh) === read(join(root, target)), `${target} is stale: run \`npm run generate\``).toBe(true);
    },
    120_000,
  );

  it(`${schemaTarget} is the schema the migrations build`, async () => {
    const fresh = await dumpSchema();
    expect(fresh === read(join(root, schemaTarget)), `${schemaTarget} is stale: run \`npm run generate\``).toBe(true);
  }, 120_000);
});
