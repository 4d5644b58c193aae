/**
 * The published shape of the SDK: `npm pack` it, install the tarball into an empty project (as an integrator
 * would), type-check a consumer file with `tsc` (NodeNext, strict) and import the package from plain Node.
 * Dependencies come from the local npm cache when it has them (`--prefer-offline`), otherwise from the registry
 * (a fresh machine's cache may lack the SDK's own dependencies, which the workspace install never fetched alone).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SDK_VERSION } from '@survey-service/sdk';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sdk-pack-'));
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });

afterAll(() => rmSync(work, { recursive: true, force: true }));

const consumerTs = `
import { createClient, verifyWebhook, NotFoundError, type Survey, type SyncJob, type paths, type components } from '@survey-service/sdk';

const client = createClient({ apiKey: 'svc_test_${'0'.repeat(64)}', baseUrl: 'http://127.0.0.1:9', retry: { maxRetries: 0 } });

export async function getSurvey(id: string): Promise<Survey | undefined> {
  try {
    const survey = await client.unwrap(client.GET('/api/v1/surveys/{id}', { params: { path: { id } } }));
    const title: string = survey.title;
    void title;
    return survey;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
export async function allSurveyIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const survey of client.paginate('/api/v1/surveys', { params: { query: { pageSize: 100 } } })) ids.push(survey.id);
  return ids;
}
export type Job = SyncJob;
export type Meta = components['schemas']['Meta'];
export type AnyPath = keyof paths;
export const event: unknown = verifyWebhook('{}', {}, 'whsec_AAAA');
// @ts-expect-error: the typed client refuses paths that are not in the document
void client.GET('/api/v1/not-a-path');
`;

const consumerMjs = `
import * as sdk from '@survey-service/sdk';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const expected = ['createClient', 'verifyWebhook', 'signWebhook', 'unwrap', 'paginate', 'waitFor', 'waitForSyncJob',
  'SurveyServiceError', 'ValidationError', 'AuthenticationError', 'PermissionError', 'NotFoundError', 'ConflictError',
  'RateLimitError', 'ServerError', 'TimeoutError', 'WebhookVerificationError'];
const missing = expected.filter((name) => typeof sdk[name] !== 'function');
const client = sdk.createClient({ apiKey: 'svc_test_x', baseUrl: 'http://127.0.0.1:9' });
const document = require('@survey-service/sdk/openapi.json');
console.log(JSON.stringify({
  missing,
  methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'unwrap', 'paginate'].filter((m) => typeof client[m] === 'function'),
  openapi: document.openapi,
  openapiPath: import.meta.resolve('@survey-service/sdk/openapi.json'),
}));
`;

describe('the packed SDK', () => {
  it('installs into an empty project, type-checks and imports', { timeout: 120_000 }, () => {
    run('npm', ['pack', '-w', 'sdk', '--pack-destination', work, '--silent'], root);
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const listing = run('tar', ['-tzf', join(work, tarball!)], work).split('\n');
    expect(listing).toContain('package/dist/index.js');
    expect(listing).toContain('package/dist/index.d.ts');
    expect(listing).toContain('package/openapi.json');
    expect(listing).toContain('package/README.md');
    expect(listing.filter((f) => f.startsWith('package/src/') || f.includes('.test.'))).toEqual([]);

    const project = join(work, 'consumer');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball!)], project);

    writeFileSync(join(project, 'index.ts'), consumerTs);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ['index.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], project);
    } catch (error) {
      throw new Error(`tsc failed in the consumer project:\n${(error as { stdout?: string }).stdout ?? error}`);
    }

    writeFileSync(join(project, 'check.mjs'), consumerMjs);
    const result = JSON.parse(run(process.execPath, ['check.mjs'], project));
    expect(result.missing).toEqual([]);
    expect(result.methods).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'unwrap', 'paginate']);
    expect(result.openapi).toMatch(/^3\.1\./);
    expect(result.openapiPath).toContain('node_modules/@survey-service/sdk/openapi.json');
  });

  it('reports the version of its package.json', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'sdk', 'package.json'), 'utf8'));
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
