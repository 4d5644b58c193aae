/**
 * The generated files are current: running the same tools as `scripts/generate.ts` (`redocly bundle`, then
 * `openapi-typescript` on the bundle) into a temporary directory gives exactly the committed outputs, each committed
 * once (the SDK's build copies both in). CI fails here when someone edits `openapi/` and forgets `npm run generate`.
 * Likewise `docs/schema.sql`: the schema of a freshly migrated throw-away database, described again, is the committed
 * file (a new migration without `npm run generate` fails here).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle, generateTypes, typesTarget } from '../../scripts/generate.js';
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

  it(`${typesTarget} is generated from the bundle`, () => {
    // The same command and options as scripts/generate.ts, written elsewhere.
    const fresh = join(dir, 'openapi.ts');
    generateTypes('openapi/bundled/openapi.json', fresh);
    const current = read(fresh) === read(join(root, typesTarget));
    expect(current, `${typesTarget} is stale: run \`npm run generate\``).toBe(true);
  }, 120_000);

  it(`${schemaTarget} is the schema the migrations build`, async () => {
    const fresh = await dumpSchema();
    expect(fresh === read(join(root, schemaTarget)), `${schemaTarget} is stale: run \`npm run generate\``).toBe(true);
  }, 120_000);
});
