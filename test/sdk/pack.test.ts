/**
 * The published shape of the SDK: `npm pack` it, install the tarball into an empty project (as an integrator
 * would), type-check a consumer file with `tsc` (NodeNext, strict) and import the package from plain Node.
 * Dependencies come from the local npm cache when it has them (`--prefer-offline`), otherwise from the registry
 * (a fresh machine's cache may lack the SDK's own dependencies, which the workspace install never fetched alone).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SDK_VERSION } from '@survey-service/sdk';
import { startTestService, type TestService } from '../helpers/service.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sdk-pack-'));
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

let t: TestService;
let liveKey: string;
beforeAll(async () => {
  t = await startTestService();
  ({ liveKey } = await t.createTenant());
  await t.client(liveKey).surveys.create({ title: 'Packed', questions: [{ type: 'nps', text: 'Recommend us?' }] });
});
afterAll(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

const consumerTs = `
import { createClient, verifyWebhook, NotFoundError, type Survey, type SyncJob, type SyncRecord, type AnalyticsSegmentBy, type RetryEvent, type paths, type components } from '@survey-service/sdk';

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
export async function titles(): Promise<string[]> {
  const surveys: Survey[] = await client.surveys.list({ pageSize: 10 });
  const launched: Survey = await client.surveys.launch(surveys[0]!.id, { idempotencyKey: 'k-1', timeoutMs: 5_000 });
  void launched;
  for await (const delivery of client.webhooks.deliveries.listAll('whk_01JD3M8Q4W6T9ZK2F7X1B5N0C8')) void delivery.status;
  return surveys.map((s) => s.title);
}
export function narrow(payload: string, headers: Record<string, string>, secret: string): string {
  const verified = client.webhooks.constructEvent(payload, headers, secret);
  switch (verified.type) {
    case 'response.submitted':
      return verified.data.surveyId;
    case 'respondents.sync.completed':
      return verified.data.status;
    default:
      return verified.type;
  }
}
// @ts-expect-error: resource methods check their parameters too
void client.surveys.get(42);
// @ts-expect-error: the typed client refuses paths that are not in the document
void client.GET('/api/v1/not-a-path');
const records: SyncRecord[] = [{ externalId: 'E-1', email: 'ada@example.com', department: 'R&D' }];
void client.respondents.sync({ mode: 'upsert', respondents: records });
// @ts-expect-error: a sync record with a misspelt field
void client.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 'E-1', email: 'a@example.com', departmnet: 'x' }] });
// @ts-expect-error: a sync record whose externalId and email are numbers
void client.respondents.sync({ mode: 'upsert', respondents: [{ externalId: 1, email: 42 }] });
const segmentBy: AnalyticsSegmentBy = 'attributes.team';
void client.analytics.static('srv_1', { segmentBy, filters: { filters: [{ field: 'department', operator: 'equals', value: 'Sales' }] } });
// @ts-expect-error: a segmentBy that is no field
void client.analytics.static('srv_1', { segmentBy: 'departement' });
// @ts-expect-error: a segmentBy that is no field, in smart analytics too
void client.analytics.smart('srv_1', { segmentBy: 'departement' });
createClient({ apiKey: 'k', baseUrl: 'https://api.example.com', retry: { onRetry: (e: RetryEvent) => console.log(e.attempt, e.delayMs, e.response?.status) } });
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
const live = sdk.createClient({ apiKey: process.env.SURVEY_API_KEY, baseUrl: process.env.SURVEY_API_BASE_URL });
const titles = (await live.surveys.list()).map((s) => s.title);
console.log(JSON.stringify({
  titles,
  missing,
  methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'unwrap', 'paginate'].filter((m) => typeof client[m] === 'function'),
  openapi: document.openapi,
  openapiPath: import.meta.resolve('@survey-service/sdk/openapi.json'),
}));
`;

const consumerCjs = `
const { createClient, NotFoundError } = require('@survey-service/sdk');
const client = createClient({ apiKey: process.env.SURVEY_API_KEY, baseUrl: process.env.SURVEY_API_BASE_URL });
(async () => {
  const surveys = await client.surveys.list();
  const missing = await client.surveys.get('srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8').catch((error) => error instanceof NotFoundError);
  console.log(JSON.stringify({ titles: surveys.map((s) => s.title), notFound: missing, resolved: require.resolve('@survey-service/sdk') }));
})();
`;

describe('the packed SDK', () => {
  it(
    'installs into an empty project (ESM, CommonJS and TypeScript consumers), type-checks and calls the service',
    { timeout: 180_000 },
    async () => {
      run('npm', ['pack', '-w', 'sdk', '--pack-destination', work, '--silent'], root);
      const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
      expect(tarball).toBeDefined();
      const listing = run('tar', ['-tzf', join(work, tarball!)], work).split('\n');
      expect(listing).toContain('package/dist/index.js');
      expect(listing).toContain('package/dist/index.d.ts');
      expect(listing).toContain('package/dist/cjs/index.js');
      expect(listing).toContain('package/dist/cjs/index.d.ts');
      expect(listing).toContain('package/dist/cjs/package.json');
      expect(listing).toContain('package/openapi.json');
      expect(listing).toContain('package/README.md');
      // The contract's types and bundle, copied in by the build (sdk/scripts/build.js) from their one committed place;
      // the types' copy is gone again, so the root tsconfig keeps resolving the committed one.
      expect(listing).toContain('package/dist/generated/openapi.d.ts');
      expect(listing).toContain('package/dist/cjs/generated/openapi.d.ts');
      expect(existsSync(join(root, 'sdk/src/generated/openapi.ts'))).toBe(false);
      expect(listing.filter((f) => f.startsWith('package/src/') || f.includes('.test.'))).toEqual([]);
      // The README's size table says what an integrator downloads: within 10% of the tarball, its file count exact.
      const stated = readFileSync(join(root, 'sdk/README.md'), 'utf8').match(
        /\| `npm pack` tarball \| (\d+) KB \((\d+) files/,
      );
      expect(stated, 'the SDK README states the tarball size').not.toBeNull();
      const bytes = statSync(join(work, tarball!)).size;
      expect(Math.abs(bytes / 1000 - Number(stated![1])) / (bytes / 1000)).toBeLessThan(0.1);
      expect(listing.filter((f) => f.length > 0 && !f.endsWith('/')).length).toBe(Number(stated![2]));

      const project = join(work, 'consumer');
      mkdirSync(project);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
      run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball!)], project);
      const packedDocument = readFileSync(join(project, 'node_modules/@survey-service/sdk/openapi.json'), 'utf8');
      expect(packedDocument === readFileSync(join(root, 'openapi/bundled/openapi.json'), 'utf8')).toBe(true);

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
        throw new Error(`tsc failed in the consumer project:\n${(error as { stdout?: string }).stdout ?? error}`, {
          cause: error,
        });
      }

      const env = { ...process.env, SURVEY_API_KEY: liveKey, SURVEY_API_BASE_URL: t.url };
      // Asynchronously: the service answering these calls runs in this process.
      const node = async (file: string) =>
        (await promisify(execFile)(process.execPath, [file], { cwd: project, encoding: 'utf8', env })).stdout;
      writeFileSync(join(project, 'check.mjs'), consumerMjs);
      const result = JSON.parse(await node('check.mjs'));
      expect(result.titles).toEqual(['Packed']);
      // CommonJS: require() gets the CommonJS build, and makes a real call.
      writeFileSync(join(project, 'check.cjs'), consumerCjs);
      const cjs = JSON.parse(await node('check.cjs'));
      expect(cjs).toMatchObject({ titles: ['Packed'], notFound: true });
      expect(cjs.resolved).toContain('node_modules/@survey-service/sdk/dist/cjs/index.js');

      // Types for both conditions, as @arethetypeswrong/cli sees the tarball: no problem for any resolution mode.
      const attw = join(root, 'node_modules', '.bin', 'attw');
      const report = JSON.parse(run(attw, [join(work, tarball!), '--format', 'json'], work).trim() || '{}') as {
        analysis?: { problems?: unknown[] };
        problems?: unknown;
      };
      expect(report.analysis?.problems).toEqual([]);
      expect(result.missing).toEqual([]);
      expect(result.methods).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'unwrap', 'paginate']);
      expect(result.openapi).toMatch(/^3\.1\./);
      expect(result.openapiPath).toContain('node_modules/@survey-service/sdk/openapi.json');
    },
  );

  it('reports the version of its package.json', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'sdk', 'package.json'), 'utf8'));
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
