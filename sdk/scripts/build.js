/**
 * `npm run build` (and so `npm pack`): dist/ as ESM and CommonJS from two `tsc` passes, and openapi.json beside it.
 * The contract's generated types and bundle are the repository's single copies (server/src/generated/openapi.ts,
 * openapi/bundled/openapi.json, both from `npm run generate`); they are copied in here, not committed twice. The
 * types' copy lives in src/generated only while tsc runs: left there, it would shadow the repository's copy that the
 * root tsconfig resolves to (rootDirs), and go stale on the next change of the contract.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

const sdk = path.resolve(import.meta.dirname, '..');
const repository = path.resolve(sdk, '..');
const typesCopy = path.join(sdk, 'src/generated/openapi.ts');
// The workspace's TypeScript (a devDependency of the repository), found from here.
const tscPath = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const tsc = (project) => execFileSync(process.execPath, [tscPath, '-p', project], { cwd: sdk, stdio: 'inherit' });

rmSync(path.join(sdk, 'dist'), { recursive: true, force: true });
copyFileSync(path.join(repository, 'openapi/bundled/openapi.json'), path.join(sdk, 'openapi.json'));
copyFileSync(path.join(repository, 'server/src/generated/openapi.ts'), typesCopy);
try {
  tsc('tsconfig.build.json');
  tsc('tsconfig.cjs.json');
} finally {
  rmSync(typesCopy, { force: true });
}
writeFileSync(path.join(sdk, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
