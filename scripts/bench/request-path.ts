/**
 * Request-path benchmark: the whole pipeline — routing, key (cached), both rate-limit windows,
 * validation, handler, database — for an authenticated list (20 surveys) and a response submission, against a
 * bare Express route serving the same 20-survey envelope from memory. The service runs as `npm start` does
 * (server/src/main.ts, in child processes: API_PROCESSES=1, then 2), the bare route in a child process too, and
 * the load generator (autocannon) in this process, so no two share an event loop.
 *
 *   npm run bench -- request-path      BENCH_SECONDS (default 5), BENCH_CONNECTIONS (default 50),
 *                                      BENCH_WARMUP_SECONDS (default 10), BENCH_ROUNDS (default 3),
 *                                      BENCH_PROFILE=<dir> (CPU profiles of the service processes)
 *
 * Production-like: NODE_ENV=production (no response validation), log level warn. The tenant's limits are
 * raised so that every request is counted but none refused. Writes its section of BENCHMARKS.md.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import {
  cpuTicks,
  median,
  startApiProcess,
  startBenchProcess,
  startBenchService,
  tickMicros,
  writeBenchmarkSection,
} from './shared.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

// BENCH_PROFILE=<dir>: CPU profiles of the service processes (for finding where a request's time goes).
const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

interface Measure {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** CPU time per request (µs) of the process under test and its children, and of the PostgreSQL server. */
  serviceCpuUs: number;
  databaseCpuUs: number | null;
  /** Of `databaseCpuUs`, PostgreSQL's background processes (autovacuum, checkpointer, WAL and page writers). */
  databaseBackgroundCpuUs: number | null;
  /** CPU time per request (µs) of the load generator (this process). */
  clientCpuUs: number;
}

/**
 * PostgreSQL's own background processes: what they do (vacuuming the dead rows of earlier rounds, flushing WAL and
 * pages) is charged to whichever round is running when they run, so it is reported apart from the backends. An
 * autovacuum worker that has exited counts here too (see cpuTicks).
 */
const postgresBackground =
  /postgres: .*(checkpointer|background writer|walwriter|autovacuum|logical replication|archiver|stats)/;

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** Load to let JIT, pools and prepared statements reach their steady state, unrecorded. */
async function warmUp(options: autocannon.Options): Promise<void> {
  if (warmUpSeconds > 0) await autocannon({ connections, duration: warmUpSeconds, ...options });
}

async function measureOnce(
  name: string,
  options: autocannon.Options,
  cpuOf: { service: number; database: number | null },
): Promise<Measure> {
  const background = (pid: number) => postgresBackground.test(commandLine(pid));
  const databaseBackground = () => (cpuOf.database ? cpuTicks([cpuOf.database], background) : 0);
  const before = {
    service: cpuTicks([cpuOf.service]),
    database: cpuOf.database ? cpuTicks([cpuOf.database]) : 0,
    background: databaseBackground(),
  };
  const client = process.cpuUsage();
  const result = await autocannon({ connections, duration: seconds, ...options });
  const clientUsage = process.cpuUsage(client);
  const requests = Math.max(1, result.requests.total);
  const serviceCpuUs = ((cpuTicks([cpuOf.service]) - before.service) * tickMicros) / requests;
  const databaseCpuUs = cpuOf.database
    ? ((cpuTicks([cpuOf.database]) - before.database) * tickMicros) / requests
    : null;
  const databaseBackgroundCpuUs = cpuOf.database
    ? ((databaseBackground() - before.background) * tickMicros) / requests
    : null;
  const clientCpuUs = (clientUsage.user + clientUsage.system) / requests;
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors,
    serviceCpuUs,
    databaseCpuUs,
    databaseBackgroundCpuUs,
    clientCpuUs,
  };
}

interface Target {
  name: string;
  options: autocannon.Options;
  cpuOf: { service: number; database: number | null };
}

/**
 * Each target warmed up once (`warmUpSeconds`: ten by default; after two, V8 was still optimising the request path,
 * a tenth of the service's CPU in its compiler threads, and a submission cost 1.3 ms of service CPU against 0.8 ms
 * once warm), then measured in `rounds` rounds that take the targets in turn, so that a baseline and what is
 * compared with it share the machine's moods; each figure is the median of its rounds.
 */
async function measureInRounds(targets: Target[], rounds: number): Promise<Measure[]> {
  for (const target of targets) await warmUp(target.options);
  const runs = targets.map(() => [] as Measure[]);
  for (let round = 0; round < rounds; round++)
    for (const [index, target] of targets.entries())
      runs[index]!.push(await measureOnce(target.name, target.options, target.cpuOf));
  return runs.map((measured, index) => {
    const mid = (pick: (m: Measure) => number) => median(measured.map(pick));
    return {
      name: targets[index]!.name,
      rps: mid((m) => m.rps),
      p50: mid((m) => m.p50),
      p99: mid((m) => m.p99),
      failures: measured.reduce((sum, m) => sum + m.failures, 0),
      serviceCpuUs: mid((m) => m.serviceCpuUs),
      databaseCpuUs: measured[0]!.databaseCpuUs === null ? null : mid((m) => m.databaseCpuUs!),
      databaseBackgroundCpuUs:
        measured[0]!.databaseBackgroundCpuUs === null ? null : mid((m) => m.databaseBackgroundCpuUs!),
      clientCpuUs: mid((m) => m.clientCpuUs),
    };
  });
}

/** The PostgreSQL server's postmaster, when it runs on this machine and its data directory is readable. */
async function postmasterPid(db: import('../../server/src/db/database.js').Db): Promise<number | null> {
  try {
    const { rows } = await sql<{
      setting: string;
    }>`select setting from pg_settings where name = 'data_directory'`.execute(db);
    return Number(readFileSync(path.join(rows[0]!.setting, 'postmaster.pid'), 'utf8').split('\n')[0]) || null;
  } catch {
    return null;
  }
}

/**
 * The targets, each against its baseline in this run: the service's CPU per request at most 2.5× the bare route's
 * (list against bare GET, submission against bare POST), PostgreSQL's CPU per request bounded (list 400 µs,
 * submission 600 µs), and throughput at least 0.3× the bare route's.
 */
function targets(results: Measure[]): string[] {
  const [bareGet, barePost, list, submit] = results as [Measure, Measure, Measure, Measure];
  const check = (ok: boolean) => (ok ? 'met' : '**not met**');
  const row = (name: string, measured: Measure, bare: Measure, databaseBound: number) => {
    const cpu = measured.serviceCpuUs / bare.serviceCpuUs;
    const throughput = measured.rps / bare.rps;
    const database = measured.databaseCpuUs ?? Number.NaN;
    return `| ${name} | ${cpu.toFixed(2)}× (${check(cpu <= 2.5)}) | ${Math.round(database)} µs ≤ ${databaseBound} (${check(database <= databaseBound)}) | ${throughput.toFixed(2)}× (${check(throughput >= 0.3)}) |`;
  };
  return [
    "| 1 API process | service CPU ÷ bare route's (≤ 2.5×) | PostgreSQL CPU per request | throughput ÷ bare route's (≥ 0.3×) |",
    '|---|---|---|---|',
    row('GET /api/v1/surveys?pageSize=20 (against bare GET)', list, bareGet, 400),
    row('POST /api/v1/surveys/{id}/responses (against bare POST)', submit, barePost, 600),
  ];
}

/**
 * When the machine is CPU-bound (load generator, service and PostgreSQL share its cores), throughput is inversely
 * proportional to the CPU a request costs everyone, so the CPU columns bound the ratio any request path can reach
 * here: the bare route's CPU per request (its process and the load generator's) over the measured route's
 * (service, PostgreSQL and load generator), and — even with a service that cost nothing — over PostgreSQL's and
 * the load generator's alone.
 */
function ceilings(results: Measure[]): string[] {
  const bare = results[0]!.serviceCpuUs + results[0]!.clientCpuUs;
  const lines = results
    .slice(2)
    .filter((r) => r.databaseCpuUs !== null && r.name.includes('1 API process'))
    .map((r) => {
      const total = r.serviceCpuUs + r.databaseCpuUs! + r.clientCpuUs;
      const withoutService = r.databaseCpuUs! + r.clientCpuUs;
      return `- ${r.name.split(' — ')[0]}: ${Math.round(total)} µs of CPU per request (service ${Math.round(r.serviceCpuUs)}, PostgreSQL ${Math.round(r.databaseCpuUs!)}, load generator ${Math.round(r.clientCpuUs)}) against the bare route's ${Math.round(bare)} µs: a CPU-bound ceiling of ${(bare / total).toFixed(2)}× (measured ${(r.rps / results[0]!.rps).toFixed(2)}×). PostgreSQL and the load generator alone cap it at ${(bare / withoutService).toFixed(2)}×.`;
    });
  return lines.length > 0 ? ['CPU-bound ceilings (this run):', '', ...lines] : [];
}

export async function run(): Promise<void> {
  const service = await startBenchService('request_path', {
    layout: 'api-process',
    env: { API_PROCESSES: '1' },
    nodeOptions: profile,
  });
  const first = service.apiProcess!;
  const processes: ChildProcess[] = [];
  try {
    const { key } = service;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const api = async (url: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { data: { id: string } };
    };
    const questions = [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'rating', text: 'I have the tools I need.' },
      { type: 'single_choice', text: 'Where do you work?', choices: [{ label: 'Office' }, { label: 'Home' }] },
      { type: 'text', text: 'What should we change?', required: false },
    ];
    for (let i = 0; i < 49; i++) await api(first.url, 'POST', '/api/v1/surveys', { title: `Pulse ${i}`, questions });
    const target = await api(first.url, 'POST', '/api/v1/surveys', {
      title: 'Target',
      questions,
      settings: { anonymous: true, allowMultipleResponses: true },
    });
    await api(first.url, 'POST', `/api/v1/surveys/${target.data.id}/launch`);
    const submit = JSON.stringify({
      answers: [
        { questionId: 'q_1', value: 9 },
        { questionId: 'q_2', value: 4 },
        { questionId: 'q_3', value: 'c_2' },
        { questionId: 'q_4', value: 'Fewer meetings.' },
      ],
    });
    const list = await api(first.url, 'GET', '/api/v1/surveys?pageSize=20');
    const folder = mkdtempSync(path.join(tmpdir(), 'bench-bare-'));
    writeFileSync(path.join(folder, 'body.json'), JSON.stringify({ ...list, meta: undefined }));
    const bare = await startBenchProcess('scripts/bench/bare-server.ts', {
      env: { BARE_BODY_FILE: path.join(folder, 'body.json') },
      ready: /^BARE: (\S+)$/m,
    });
    processes.push(bare.child);

    const load = loadavg()[0]!.toFixed(2);
    console.log(`Measuring ${seconds} s each at ${connections} connections (load ${load}, ${cpus().length} CPUs)…`);
    const postgresPid = await postmasterPid(service.db);
    const bareCpu = { service: bare.child.pid!, database: null };
    const apiTargets = (count: number, url: string, service: ChildProcess): Target[] => {
      const cpuOf = { service: service.pid!, database: postgresPid };
      const processes = `${count} API process${count > 1 ? 'es' : ''}`;
      return [
        {
          name: `GET /api/v1/surveys?pageSize=20 — ${processes}`,
          options: { url: `${url}/api/v1/surveys?pageSize=20`, headers },
          cpuOf,
        },
        {
          name: `POST /api/v1/surveys/{id}/responses — ${processes}`,
          options: { url: `${url}/api/v1/surveys/${target.data.id}/responses`, method: 'POST', headers, body: submit },
          cpuOf,
        },
      ];
    };
    const results = await measureInRounds(
      [
        {
          name: 'bare Express, GET (same 20-survey envelope from memory)',
          options: { url: `${bare.ready}/bare` },
          cpuOf: bareCpu,
        },
        {
          name: 'bare Express, POST (same envelope)',
          options: {
            url: `${bare.ready}/bare`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: submit,
          },
          cpuOf: bareCpu,
        },
        ...apiTargets(1, first.url, first.child),
      ],
      rounds,
    );
    await service.stopApi();
    const second = await startApiProcess(service.databaseUrl, { env: { API_PROCESSES: '2' }, nodeOptions: profile });
    processes.push(second.child);
    // Two processes: one round (no target is set for them; they show what a second process costs here).
    results.push(...(await measureInRounds(apiTargets(2, second.url, second.child), 1)));

    const bareGet = results[0]!;
    const cpu = (us: number | null) => (us === null ? '—' : String(Math.round(us)));
    const rows = results.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${(r.rps / bareGet.rps).toFixed(2)} | ${r.failures} | ${cpu(r.serviceCpuUs)} | ${cpu(r.databaseCpuUs)} | ${cpu(r.databaseBackgroundCpuUs)} | ${cpu(r.clientCpuUs)} |`,
    );
    const markdown = [
      '## Request path',
      '',
      `\`npm run bench -- request-path\`, ${new Date().toISOString().slice(0, 10)}: median of ${rounds} interleaved rounds of ${seconds} s per row (one round for 2 API processes), after ${warmUpSeconds} s of unrecorded warm-up per row at ${connections} connections, load generator (autocannon) in its own process, service and bare route in child processes; ${cpus().length} CPUs, load average ${load} at the start (shared machine).`,
      '',
      '| target | req/s | p50 ms | p99 ms | × bare GET | non-2xx | service CPU µs/req | PostgreSQL CPU µs/req | of which background processes | load generator CPU µs/req |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      ...targets(results),
      '',
      ...ceilings(results),
    ].join('\n');
    console.log(markdown);
    if (process.env.BENCH_WRITE !== 'false') writeBenchmarkSection('## Request path', markdown);
  } finally {
    for (const proc of processes) await stop(proc).catch(() => {});
    await service.close();
  }
}
