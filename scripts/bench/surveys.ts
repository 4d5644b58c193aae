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
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import express from 'express';
import { host, startBenchService, writeBenchmarkSection } from './shared.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

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
  return {
    name,
    requests: result.requests.average,
    p99: result.latency.p99,
    p50: result.latency.p50,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

function bareServer(body: unknown): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/api/v1/surveys', (_req, res) => {
    res.json({
      ...(body as object),
      meta: { requestId: 'req_01JD3M8Q4W6T9ZK2F7X1B5N0C8', timestamp: new Date().toISOString(), apiVersion: 'v1' },
    });
  });
  return new Promise((resolve) => {
    const server = app.listen(0, host, () => resolve(server));
  });
}

export async function run(): Promise<void> {
  const service = await startBenchService('surveys', { layout: 'in-process', poolSize: 10 });
  let bare: Server | undefined;
  try {
    const { db, key, api } = service;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    const questions = [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'rating', text: 'I have the tools I need.', minLabel: 'Disagree', maxLabel: 'Agree' },
      {
        type: 'single_choice',
        text: 'Where do you work?',
        choices: [{ label: 'Office' }, { label: 'Home' }, { label: 'Hybrid' }],
      },
      {
        type: 'multiple_choice',
        text: 'Which benefits matter?',
        choices: [{ label: 'Learning' }, { label: 'Flex' }, { label: 'Health' }],
        maxSelections: 2,
      },
      { type: 'text', text: 'What should we change?', required: false },
    ];
    for (let i = 0; i < 49; i++)
      await api('POST', '/api/v1/surveys', { title: `Pulse ${i}`, description: 'Benchmark survey', questions });
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
      await measure('GET /api/v1/surveys (pageSize 20, 50 surveys)', {
        url: `${service.url}/api/v1/surveys?pageSize=20`,
        headers,
      }),
      await measure('POST /api/v1/surveys/{id}/responses', {
        url: `${service.url}/api/v1/surveys/${target.data.id}/responses`,
        method: 'POST',
        headers,
        body: JSON.stringify(answers),
      }),
    ];
    const stored = await db
      .selectFrom('responses')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
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
    writeBenchmarkSection('## Surveys and responses', markdown);
    console.log('Written to BENCHMARKS.md.');
  } finally {
    await new Promise<void>((resolve) => (bare ? bare.close(() => resolve()) : resolve()));
    await service.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
}
