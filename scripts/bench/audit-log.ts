/**
 * Audit log benchmark: what the audit entry costs a read of identified data. `GET /surveys/{id}/responses` of an
 * identified survey (audited: one `audit_log` insert before the answer) against the same list of a confidential
 * survey (not audited: it shows nobody) with the same answers, in the same run, alternating rounds.
 *
 *   npm run bench -- audit-log     BENCH_SECONDS (default 5 per round), BENCH_ROUNDS (default 3),
 *                                  BENCH_CONNECTIONS (default 10), BENCH_RESPONSES (default 200), BENCH_WRITE=false
 *
 * The API runs in its own process as `npm start` does (ROLE=api, production settings); autocannon runs here. Both
 * surveys hold BENCH_RESPONSES responses of the same people with the same answers; the list asks for 20 (the
 * default page). Their bodies differ only in `respondentExternalId` (set in one, null in the other) and ids. The
 * ratio (audited ÷ not audited, by median latency and by throughput) is the cost of the entry; the contract's goal
 * is at most 1.3×.
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { httpLatencies, median, startBenchService, writeBenchmarkSection } from './shared.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const responses = Number(process.env.BENCH_RESPONSES ?? 200);

interface Round {
  requests: number;
  p50: number;
  p99: number;
  failed: number;
}

async function measure(url: string, key: string): Promise<Round> {
  const result = await autocannon({ url, connections, duration: seconds, headers: { authorization: `Bearer ${key}` } });
  return {
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors,
  };
}

export async function run(): Promise<void> {
  const service = await startBenchService('audit_log', { layout: 'api-process' });
  try {
    const { key, organizationId, api: call } = service;
    const questions = [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'text', text: 'What should we change?', required: false },
    ];
    const surveyOf = async (privacy: string) => {
      const survey = await call('POST', '/api/v1/surveys', {
        title: `A ${privacy} survey`,
        questions,
        settings: { privacy },
      });
      await call('POST', `/api/v1/surveys/${survey.data.id}/launch`);
      return survey.data.id;
    };
    const identified = await surveyOf('identified');
    const confidential = await surveyOf('confidential');
    for (let i = 0; i < responses; i++) {
      await call('PUT', `/api/v1/respondents/E-${i}`, { email: `person${i}@example.com`, department: 'Sales' });
      for (const surveyId of [identified, confidential])
        await call('POST', `/api/v1/surveys/${surveyId}/responses`, {
          respondentExternalId: `E-${i}`,
          answers: [
            { questionId: 'q_1', value: i % 11 },
            { questionId: 'q_2', value: `Answer number ${i}, about meetings.` },
          ],
        });
    }
    const url = (surveyId: string) => `${service.url}/api/v1/surveys/${surveyId}/responses`;
    // Warm both paths (caches, plans) before measuring.
    await measure(url(identified), key);
    await measure(url(confidential), key);

    const loadBefore = loadavg()[0]!.toFixed(2);
    const audited: Round[] = [];
    const plain: Round[] = [];
    for (let r = 0; r < rounds; r++) {
      plain.push(await measure(url(confidential), key));
      audited.push(await measure(url(identified), key));
    }
    // One request at a time, from a client process of its own: the latency each request pays, to the microsecond.
    const sequential = { plain: [] as number[], audited: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      sequential.plain.push(median(await httpLatencies(url(confidential), key, 500, 50)));
      sequential.audited.push(median(await httpLatencies(url(identified), key, 500, 50)));
    }
    const oneAtATime = median(sequential.audited) / median(sequential.plain);
    const entries = await service.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('action', '=', 'responses.read')
      .executeTakeFirstOrThrow();
    const auditedRequests = audited.reduce((sum, r) => sum + r.requests * seconds, 0);
    const pick = (list: Round[], f: (r: Round) => number) => median(list.map(f));
    const row = (name: string, list: Round[]) =>
      `| ${name} | ${Math.round(pick(list, (r) => r.requests))} | ${pick(list, (r) => r.p50)} | ${pick(list, (r) => r.p99)} | ${list.reduce((s, r) => s + r.failed, 0)} |`;
    const byLatency =
      pick(audited, (r) => r.p50) /
      Math.max(
        pick(plain, (r) => r.p50),
        0.001,
      );
    const byThroughput = pick(plain, (r) => r.requests) / pick(audited, (r) => r.requests);
    const date = new Date().toISOString().slice(0, 10);
    const markdown = [
      '## Audit log: the cost of an entry per read',
      '',
      `Measured ${date} with \`npm run bench -- audit-log\` (autocannon in the bench process, the API in its own, ` +
        `${rounds} alternating rounds of ${seconds} s, ${connections} connections, medians of the rounds; ${cpus().length} CPUs ` +
        `shared with PostgreSQL (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}); 1-min load average ${loadBefore} at the start; ` +
        `Node ${process.version}). \`GET /api/v1/surveys/{id}/responses\` (20 of ${responses} responses) of an identified survey, ` +
        'which writes a `responses.read` entry before it answers, against the same list of a confidential survey with the same ' +
        'people and answers, which shows nobody and writes none.',
      '',
      '| list | req/s | p50 ms | p99 ms | non-2xx/errors |',
      '|---|---:|---:|---:|---:|',
      row('confidential survey (no entry)', plain),
      row('identified survey (one entry each)', audited),
      '',
      `One request at a time (500 per round, medians): ${median(sequential.plain).toFixed(2)} ms without an entry, ` +
        `${median(sequential.audited).toFixed(2)} ms with one.`,
      '',
      `**Audited ÷ not audited: ${byThroughput.toFixed(2)}× by throughput, ${oneAtATime.toFixed(2)}× by the latency of ` +
        `one request at a time, ${byLatency.toFixed(2)}× by median latency under load (whole ms)** ` +
        `(goal ≤ 1.3×). Entries written: ${entries.n} for about ${Math.round(auditedRequests)} audited requests measured ` +
        "(and the warm-up's): one per read.",
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    if (process.env.BENCH_WRITE !== 'false') {
      writeBenchmarkSection('## Audit log: the cost of an entry per read', markdown);
      console.log('Written to BENCHMARKS.md.');
    }
  } finally {
    await service.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
}
