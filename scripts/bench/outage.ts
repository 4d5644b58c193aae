/**
 * `npm run bench -- outage`: the database going away under load, as README "Operating" promises to survive it.
 * The service (`npm start`, role all, production settings) runs on an embedded PostgreSQL of its own; a load
 * generator in another process submits responses from 4 loops, retrying with the same Idempotency-Key. Each round
 * restarts PostgreSQL fast (SIGINT to the postmaster, 1 s down), crashes it (SIGQUIT: `pg_ctl stop -m immediate`,
 * 1 s down) or terminates every backend of the database. Reported per kind of fault: how long after the database
 * accepts connections again (or after the termination) the first submission was acknowledged, beside the median
 * latency of an acknowledged submission in the same run as the baseline; the statuses met; and whether every
 * acknowledged submission is stored exactly once.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';
import { freePort } from '../free-port.js';
import { median, startBenchService, writeBenchmarkSection } from './shared.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
type Fault = 'restart-fast' | 'crash' | 'terminate-backends';
const faults: Fault[] = ['restart-fast', 'crash', 'terminate-backends'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function run(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'survey-bench-outage-'));
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  let postgres: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir, port });
  // The database is this benchmark's own (it restarts and crashes it): the service is told its URL.
  const service = await startBenchService('outage', {
    layout: 'api-process',
    role: 'all',
    env: { DATABASE_RECONNECT_MAX_DELAY_MS: '2000' },
    databaseUrl: postgres.url,
    poolSize: 1,
  });
  const { api, key } = service;
  const survey = await api('POST', '/api/v1/surveys', {
    title: 'Outage',
    questions: [{ type: 'nps', text: 'How likely are you to recommend us?' }],
  });
  await api('POST', `/api/v1/surveys/${survey.data.id}/launch`);

  const client = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/outage-client.ts'], {
    env: { ...process.env, BENCH_URL: service.url, BENCH_KEY: key, BENCH_SURVEY: survey.data.id },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  client.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const clientDone = new Promise<void>((resolve) => client.once('exit', () => resolve()));

  const sql = async (text: string) => {
    const connection = new pg.Client({ connectionString: postgres.url });
    await connection.connect();
    try {
      return (await connection.query(text)).rows;
    } finally {
      await connection.end();
    }
  };
  const upAt: Array<{ fault: Fault; at: number }> = [];
  await sleep(2_000);
  for (let round = 0; round < ROUNDS; round++) {
    for (const fault of faults) {
      if (fault === 'terminate-backends') {
        await sql(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
      } else {
        if (fault === 'restart-fast') await postgres.stop();
        else
          process.kill(
            Number(readFileSync(path.join(postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
            'SIGQUIT',
          );
        await sleep(1_000);
        postgres = await startEmbeddedPostgres({ dataDir, port });
      }
      upAt.push({ fault, at: Date.now() });
      await sleep(3_000);
    }
  }
  client.kill('SIGTERM');
  await clientDone;
  const { acknowledged, statuses } = JSON.parse(out) as {
    acknowledged: Array<{ at: number; id: string }>;
    statuses: Record<string, number>;
  };
  const stored = (await sql(`select id from responses`)) as Array<{ id: string }>;
  const storedIds = new Set(stored.map((row) => row.id));
  const acknowledgedIds = new Set(acknowledged.map((a) => a.id));
  const exactlyOnce =
    stored.length === storedIds.size &&
    storedIds.size === acknowledgedIds.size &&
    [...acknowledgedIds].every((id) => storedIds.has(id));
  const { child } = service.apiProcess!;
  const alive = child.exitCode === null && child.signalCode === null;
  await service.close();
  await postgres.stop();
  rmSync(dataDir, { recursive: true, force: true });

  // The baseline: how long one loop takes per acknowledged submission while nothing fails (the first 2 s; four loops
  // share the stream of acknowledgements).
  const steady = acknowledged.filter((a) => a.at < (upAt[0]?.at ?? Infinity) - 1_500).map((a) => a.at);
  const baselineMs = steady.length > 1 ? (4 * (steady.at(-1)! - steady[0]!)) / (steady.length - 1) : NaN;
  const recoveries = new Map<Fault, number[]>();
  for (const { fault, at } of upAt) {
    const first = acknowledged.find((a) => a.at >= at);
    recoveries.set(fault, [...(recoveries.get(fault) ?? []), first ? first.at - at : Infinity]);
  }
  const rows = faults.map((fault) => {
    const times = recoveries.get(fault) ?? [];
    return `| ${fault} | ${ROUNDS} | ${median(times).toFixed(0)} | ${Math.max(...times).toFixed(0)} | ${(median(times) / baselineMs).toFixed(1)}× |`;
  });
  const markdown = `## Database outage (\`npm run bench -- outage\`)

${new Date().toISOString().slice(0, 10)}, this machine (${process.env.BENCH_NOTE ?? 'no other load noted'}). The service on an embedded
PostgreSQL of its own, 4 loops of submissions from another process, each retried with its Idempotency-Key every
50 ms until acknowledged; ${ROUNDS} rounds of each fault, 3 s apart. Recovery: from the database accepting connections
again (after 1 s down; the harness sees it accept only once its own probe connects, so the service is often back
first), or from the termination of every backend, to the first acknowledged submission. Baseline: the
mean time one loop takes per acknowledged submission while nothing fails (the first 2 s: ${baselineMs.toFixed(1)} ms).

| fault | rounds | recovery, median ms | max ms | median ÷ baseline |
|---|---|---|---|---|
${rows.join('\n')}

Statuses met: ${Object.entries(statuses)
    .map(([status, n]) => `${status} × ${n}`)
    .join(', ')}. Acknowledged ${acknowledgedIds.size}, stored ${stored.length}: ${
    exactlyOnce ? 'each acknowledged submission stored exactly once' : '**NOT exactly once**'
  }. The service process ${alive ? 'stayed up throughout' : '**exited**'}.
`;
  console.log(markdown);
  writeBenchmarkSection('## Database outage', markdown);
}
