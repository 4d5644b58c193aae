/**
 * `npm run generate`: the one pipeline from the hand-written contract to everything derived from it.
 *
 * 1. `redocly bundle` joins `openapi/openapi.yaml` and its `$ref`ed files into `openapi/bundled/openapi.json`,
 *    the single file that the server's validator, the SDK and the Redoc page all read.
 * 2. `openapi-typescript` turns that file into TypeScript types for the server and for the SDK.
 * 3. The bundle is copied into the SDK package so integrators can validate payloads against it.
 *
 * Every output is committed; CI runs this script and fails on `git diff --exit-code` (drift).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

const bundle = 'openapi/bundled/openapi.json';
mkdirSync(join(root, dirname(bundle)), { recursive: true });
run(bin('redocly'), ['bundle', 'openapi/openapi.yaml', '--output', bundle]);

for (const target of ['server/src/generated/openapi.ts', 'sdk/src/generated/openapi.ts']) {
  mkdirSync(join(root, dirname(target)), { recursive: true });
  run(bin('openapi-typescript'), [bundle, '--output', target]);
}
copyFileSync(join(root, bundle), join(root, 'sdk/openapi.json'));
