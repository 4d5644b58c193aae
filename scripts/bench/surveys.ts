/**
 * Surveys benchmark: the real service (auth, PostgreSQL-backed rate limit, request validation, database) against
 * a bare Express route returning the same envelope, measured with autocannon in one run.
 *
 *   npm run bench -- surveys        (or: npx tsx scripts/bench/surveys.ts)
 *
 * PostgreSQL: DATABASE_URL's server (a throw-away database is created on it and dropped), else an embedded one in
 * a temporary folder. Production-like settings: response validation off, log level warn. The tenant is a
 * BUSINESS organization whose per-organization limit override is raised so that the limiter counts every
 * request but never refuses one. Everything listens on 127.0.0.1 only. BENCH_SECONDS (default 10) and
 * BENCH_CONNECTIONS (default 10) tune the runs. The table is printed and written to BENCHMARKS.md.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import express from 'express';
import pg from 'pg';
import { loadConfig, type Config } from '../../server/src/config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';
import { createLogger } from '../../server/src/logger.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { startService } from '../../server/src/service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const host = '127.0.0.1';

interface Measure {
  name: string;
  requests: number;
  p99: number;
  p50: number;
  non2xx: number;
  errors: number;
}

async function measure(name: string, options: autocannon.Options): Promise<Measure> {
  const result = await autocannon({ connections, duration: seconds, ...options });
  return { name, requests: result.requests.average, p99: result.latency.p99, p50: result.latency.p50, non2xx: result.non2xx, errors: result.errors };
}

/** A PostgreSQL database of its own: on DATABASE_URL's server, or an embedded server. */
async function benchDatabase(): Promise<{ url: string; release(): Promise<void> }> {
  const name = `survey_bench_${process.pid}`;
  if (process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      async release() {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      },
    };
  }
  const folder = mkdtempSync(path.join(tmpdir(), 'survey-bench-'));
  chmodSync(folder, 0o755);
  const free = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, host, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const embedded: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir: folder, port: free, database: name });
  return {
    url: embedded.url,
    async release() {
      await embedded.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function bareServer(body: unknown): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/api/v1/surveys', (_req, res) => {
    res.json({ ...(body as object), meta: { requestId: 'req_01JD3M8Q4W6T9ZK2F7X1B5N0C8', timestamp: new Date().toISOString(), apiVersion: 'v1' } });
  });
  return new Promise((resolve) => {
    const server = app.listen(0, host, () => resolve(server));
  });
}

function writeSection(markdown: string): void {
  const file = path.join(root, 'BENCHMARKS.md');
  const heading = '## Surveys and responses';
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\nNumbers from `npm run bench -- <name>`, one section per benchmark.\n';
  const start = current.indexOf(heading);
  let next: string;
  if (start < 0) {
    next = `${current.trimEnd()}\n\n${markdown}`;
  } else {
    const after = current.indexOf('\n## ', start + heading.length);
    next = current.slice(0, start) + markdown + (after < 0 ? '' : `\n${current.slice(after + 1)}`);
  }
  writeFileSync(file, `${next.trimEnd()}\n`);
}

export async function run(): Promise<void> {
  const database = await benchDatabase();
  const log = createLogger('warn');
  const config: Config = { ...loadConfig([]), port: 0, host, role: 'api', validateResponses: false, logLevel: 'warn', databasePoolSize: 10 };
  const service = await startService(config, database.url, log);
  let bare: Server | undefined;
  try {
    const db = service.services.db;
    const organization = await insertOrganization(db, { name: 'Benchmark', plan: 'BUSINESS' });
    await db.updateTable('organizations').set({ rate_limit_per_minute: 100_000_000, rate_limit_per_day: 1_000_000_000 }).where('id', '=', organization.id).execute();
    const { key } = await insertKey(db, { organizationId: organization.id, environment: 'LIVE', name: 'bench', scopes: ['*'] });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const api = async (method: string, url: string, body?: unknown) => {
      const response = await fetch(`${service.url}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { data: { id: string } };
    };

    const questions = [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'rating', text: 'I have the tools I need.', minLabel: 'Disagree', maxLabel: 'Agree' },
      { type: 'single_choice', text: 'Where do you work?', choices: [{ label: 'Office' }, { label: 'Home' }, { label: 'Hybrid' }] },
      { type: 'multiple_choice', text: 'Which benefits matter?', choices: [{ label: 'Learning' }, { label: 'Flex' }, { label: 'Health' }], maxSelections: 2 },
      { type: 'text', text: 'What should we change?', required: false },
    ];
    for (let i = 0; i < 49; i++) await api('POST', '/api/v1/surveys', { title: `Pulse ${i}`, description: 'Benchmark survey', questions });
    const target = await api('POST', '/api/v1/surveys', {
      title: 'Benchmark target',
      questions,
      settings: { anonymous: true, allowMultipleResponses: true },
    });
    await api('POST', `/api/v1/surveys/${target.data.id}/launch`);
    const answers = {
      answers: [
        { questionId: 'q_1', value: 9 },
        { questionId: 'q_2', value: 4 },
        { questionId: 'q_3', value: 'c_3' },
        { questionId: 'q_4', value: ['c_1', 'c_2'] },
        { questionId: 'q_5', value: 'Fewer meetings on Tuesdays.' },
      ],
    };
    // The bare route answers with the very envelope the service gives for the list.
    const listBody = await api('GET', '/api/v1/surveys?pageSize=20');
    bare = await bareServer({ ...listBody, meta: undefined });
    const bareUrl = `http://${host}:${(bare.address() as AddressInfo).port}`;

    const loadBefore = loadavg()[0]!.toFixed(2);
    console.log(`Measuring ${seconds} s each with ${connections} connections…`);
    const results = [
      await measure('bare Express route (same envelope)', { url: `${bareUrl}/api/v1/surveys?pageSize=20` }),
      await measure('GET /api/v1/surveys (pageSize 20, 50 surveys)', { url: `${service.url}/api/v1/surveys?pageSize=20`, headers }),
      await measure('POST /api/v1/surveys/{id}/responses', {
        url: `${service.url}/api/v1/surveys/${target.data.id}/responses`,
        method: 'POST',
        headers,
        body: JSON.stringify(answers),
      }),
    ];
    const stored = await db.selectFrom('responses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const baseline = results[0]!;
    const rows = results.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.requests)} | ${r.p50} | ${r.p99} | ${(r.requests / baseline.requests).toFixed(2)} | ${r.non2xx + r.errors} |`,
    );
    const date = new Date().toISOString().slice(0, 10);
    const markdown = [
      '## Surveys and responses',
      '',
      `Measured ${date} with \`npm run bench -- surveys\` (autocannon, ${seconds} s per row, ${connections} connections, ` +
        `${cpus().length} CPUs shared with the database and load generator, 1-min load average ${loadBefore} at the start, PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded'}, ` +
        `Node ${process.version}). The service runs with response validation off and log level warn, for a BUSINESS organization ` +
        'whose raised limit override keeps the PostgreSQL-backed rate limiter counting every request without refusing any. ' +
        'The bare route is Express alone on another port, answering the same list envelope from memory.',
      '',
      '| target | req/s | p50 ms | p99 ms | ratio to bare | non-2xx/errors |',
      '|---|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      `Responses stored by the submission run: ${stored.n}. Each request of the service does authentication (a key lookup), a rate-limit ` +
        'update in PostgreSQL, contract validation and its own queries (a page and a count for the list; read, insert and counter ' +
        'update in one transaction for a submission), which is what the ratio to the bare route measures.',
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    writeSection(markdown);
    console.log('Written to BENCHMARKS.md.');
  } finally {
    // autocannon drops its sockets at the deadline; let the requests still running on them end before the pool closes.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await new Promise<void>((resolve) => (bare ? bare.close(() => resolve()) : resolve()));
    await service.close();
    await database.release();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
}
