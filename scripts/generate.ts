/**
 * `npm run generate`: the one pipeline from the hand-written contract to everything derived from it.
 *
 * 1. `redocly bundle` joins `openapi/openapi.yaml` and its `$ref`ed files into `openapi/bundled/openapi.json`,
 *    the single file that the server's validator, the SDK and the Redoc page all read, and every operation gets
 *    generated `x-codeSamples` (curl and the SDK's resource method).
 * 2. `openapi-typescript` turns that file into TypeScript types (`server/src/generated/openapi.ts`): the server's, and
 *    the SDK's too (the root tsconfig resolves `sdk/src/generated/openapi.ts` to it; the SDK's build copies it in).
 * 3. `scripts/generate-sdk.ts` writes the SDK's resource methods (`client.surveys.list()`, …) and their table in
 *    the SDK README.
 * 4. `scripts/schema-dump.ts` migrates a throw-away embedded PostgreSQL and writes its schema to `docs/schema.sql`
 *    (the migrations' result, readable in one file).
 *
 * Every output is committed, once; CI runs this script and fails on `git diff --exit-code` (drift), and
 * test/contract/generated.test.ts checks the same with these exact options. The SDK package gets its copies of the
 * types and the bundle when it is built (`sdk/scripts/build.js`, run by `npm pack`), never committed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addCodeSamples, generateResources, withMethodsTable } from './generate-sdk.js';
import { dumpSchema, schemaTarget } from './schema-dump.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

export const bundlePath = 'openapi/bundled/openapi.json';
export const typesTarget = 'server/src/generated/openapi.ts';
export const resourcesTarget = 'sdk/src/generated/resources.ts';
/**
 * - `--default-non-nullable=false`: a field with a `default` stays optional for callers (they may omit `dryRun`).
 * - `--empty-objects-unknown`: free-form objects (sync records, attributes) are `Record<string, unknown>`.
 * - `--root-types --root-types-no-schema-prefix`: each schema is also a named type (`Question` for
 *   `components['schemas']['Question']`), imported where used instead of restated as a local alias.
 */
export const typescriptFlags = [
  '--default-non-nullable=false',
  '--empty-objects-unknown',
  '--root-types',
  '--root-types-no-schema-prefix',
];

/** `redocly bundle`, then generated `x-codeSamples` (curl and SDK) on every operation. */
export function bundle(output: string): void {
  execFileSync(bin('redocly'), ['bundle', 'openapi/openapi.yaml', '--output', output], { cwd: root, stdio: 'pipe' });
  const file = resolve(root, output);
  writeFileSync(file, `${JSON.stringify(addCodeSamples(JSON.parse(readFileSync(file, 'utf8'))), null, 2)}\n`);
}

export function generateTypes(input: string, output: string): void {
  execFileSync(bin('openapi-typescript'), [input, '--output', output, ...typescriptFlags], {
    cwd: root,
    stdio: 'pipe',
  });
}

async function main(): Promise<void> {
  mkdirSync(join(root, dirname(bundlePath)), { recursive: true });
  bundle(bundlePath);
  mkdirSync(join(root, dirname(typesTarget)), { recursive: true });
  generateTypes(bundlePath, typesTarget);
  generateResources(root, bundlePath, resourcesTarget);
  const readme = join(root, 'sdk/README.md');
  writeFileSync(
    readme,
    withMethodsTable(readFileSync(readme, 'utf8'), JSON.parse(readFileSync(join(root, bundlePath), 'utf8'))),
  );
  writeFileSync(join(root, schemaTarget), await dumpSchema());
  console.log(`generated ${bundlePath}, ${typesTarget}, ${resourcesTarget}, ${schemaTarget}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
