/**
 * Request-path benchmark: the whole pipeline — routing, key (cached), both rate-limit windows,
 * validation, handler, database — for an authenticated list (20 surveys) and a response submission, against a
 * bare Express route serving the same 20-survey envelope from memory. The service runs as `npm start` does
 * (server/src/main.ts, in child processes: API_PROCESSES=1, then 2), the bare route in a child process too, and
 * the load generator (autocannon) in this process, so no two share an event loop.
 *
 *   npm run bench -- request-path      BENCH_SECONDS (default 5), BENCH_CONNECTIONS (default 50),
 *                                      BENCH_PROFILE=<dir> (CPU profiles of the service processes)
 *
 * Production-like: NODE_ENV=production (no response validation), log level warn. The tenant's limits are
 * raised so that every request is counted but none refused. Writes its section of BENCHMARKS.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openDatabase } from '../../server/src/db/database.js';
import { benchDatabase, benchTenant, writeBenchmarkSection } from './shared.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function child(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ process: ChildProcess; url: string }> {
  // BENCH_PROFILE=<dir>: CPU profiles of the service processes (for finding where a request's time goes).
  const profile =
    process.env.BENCH_PROFILE && script.startsWith('server/')
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
      : [];
  const proc = spawn(process.execPath, [...profile, '--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = ready.exec(output);
      if (match) resolve({ process: proc, url: match[1]! });
    };
    proc.stdout!.on('data', (chunk: Buffer) => ((output += chunk.toString()), check()));
    proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.once('exit', (code) => reject(new Error(`${script} exited (${code}):\n${output}`)));
  });
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

interface Measure {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** CPU time per request (µs) of the process under test and its children, and of the PostgreSQL server. */
  serviceCpuUs: number;
  databaseCpuUs: number | null;
  /** CPU time per request (µs) of the load generator (this process). */
  clientCpuUs: number;
}

/** CPU ticks (user + system) of `roots` and all their descendants, from /proc (Linux). */
function cpuTicks(roots: number[]): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // exited meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let current: number | undefined = pid; current && current > 1; current = parents.get(current))
      if (roots.includes(current)) return true;
    return false;
  };
  let total = 0;
  for (const [pid, value] of ticks) if (inTree(pid)) total += value;
  return total;
}
const tickMicros = 10_000; // USER_HZ is 100 on Linux

/** Runs `warmUpSeconds` unrecorded (JIT, pools and prepared statements reach their steady state), then measures. */
async function measure(
  name: string,
  options: autocannon.Options,
  cpuOf: { service: number; database: number | null },
): Promise<Measure> {
  if (warmUpSeconds > 0) await autocannon({ connections, duration: warmUpSeconds, ...options });
  const before = { service: cpuTicks([cpuOf.service]), database: cpuOf.database ? cpuTicks([cpuOf.database]) : 0 };
  const client = process.cpuUsage();
  const result = await autocannon({ connections, duration: seconds, ...options });
  const clientUsage = process.cpuUsage(client);
  const requests = Math.max(1, result.requests.total);
  const serviceCpuUs = ((cpuTicks([cpuOf.service]) - before.service) * tickMicros) / requests;
  const databaseCpuUs = cpuOf.database
    ? ((cpuTicks([cpuOf.database]) - before.database) * tickMicros) / requests
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
    clientCpuUs,
  };
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
  const database = await benchDatabase('request_path');
  const handle = openDatabase(database.url, 2);
  const processes: ChildProcess[] = [];
  try {
    const serviceEnv = (apiProcesses: number) => ({
      DATABASE_URL: database.url,
      PORT: '0',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      API_PROCESSES: String(apiProcesses),
      ROLE: 'api',
      PUBLIC_BASE_URL: '',
    });
    const first = await child('server/src/main.ts', serviceEnv(1), /^API: (http:\/\/\S+)\/api\/v1$/m);
    processes.push(first.process);
    const { key } = await benchTenant(handle.db);
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
    const bare = await child(
      'scripts/bench/bare-server.ts',
      { BARE_BODY_FILE: path.join(folder, 'body.json') },
      /^BARE: (\S+)$/m,
    );
    processes.push(bare.process);

    const load = loadavg()[0]!.toFixed(2);
    console.log(`Measuring ${seconds} s each at ${connections} connections (load ${load}, ${cpus().length} CPUs)…`);
    const results: Measure[] = [];
    const postgresPid = await postmasterPid(handle.db);
    const bareCpu = { service: bare.process.pid!, database: null };
    results.push(
      await measure('bare Express, GET (same 20-survey envelope from memory)', { url: `${bare.url}/bare` }, bareCpu),
    );
    results.push(
      await measure(
        'bare Express, POST (same envelope)',
        { url: `${bare.url}/bare`, method: 'POST', headers: { 'content-type': 'application/json' }, body: submit },
        bareCpu,
      ),
    );
    const byProcesses = async (count: number, url: string, service: ChildProcess) => {
      const cpuOf = { service: service.pid!, database: postgresPid };
      results.push(
        await measure(
          `GET /api/v1/surveys?pageSize=20 — ${count} API process${count > 1 ? 'es' : ''}`,
          { url: `${url}/api/v1/surveys?pageSize=20`, headers },
          cpuOf,
        ),
      );
      results.push(
        await measure(
          `POST /api/v1/surveys/{id}/responses — ${count} API process${count > 1 ? 'es' : ''}`,
          { url: `${url}/api/v1/surveys/${target.data.id}/responses`, method: 'POST', headers, body: submit },
          cpuOf,
        ),
      );
    };
    await byProcesses(1, first.url, first.process);
    await stop(first.process);
    const second = await child('server/src/main.ts', serviceEnv(2), /^API: (http:\/\/\S+)\/api\/v1$/m);
    processes.push(second.process);
    await byProcesses(2, second.url, second.process);

    const bareGet = results[0]!;
    const bareP99 = Math.max(results[0]!.p99, results[1]!.p99);
    const cpu = (us: number | null) => (us === null ? '—' : String(Math.round(us)));
    const rows = results.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${(r.rps / bareGet.rps).toFixed(2)} | ${r.failures} | ${cpu(r.serviceCpuUs)} | ${cpu(r.databaseCpuUs)} | ${cpu(r.clientCpuUs)} |`,
    );
    const markdown = [
      '## Request path',
      '',
      `\`npm run bench -- request-path\`, ${new Date().toISOString().slice(0, 10)}: ${seconds} s per row (after ${warmUpSeconds} s of unrecorded warm-up) at ${connections} connections, load generator (autocannon) in its own process, service and bare route in child processes; ${cpus().length} CPUs, load average ${load} at the start (shared machine).`,
      '',
      '| target | req/s | p50 ms | p99 ms | × bare GET | non-2xx | service CPU µs/req | PostgreSQL CPU µs/req | load generator CPU µs/req |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `Targets: ≥ 0.5× the bare route and p99 ≤ 25 ms, or ≤ 2× the bare route's p99 (${bareP99} ms here) on a slower machine.`,
      '',
      ...ceilings(results),
    ].join('\n');
    console.log(markdown);
    if (process.env.BENCH_WRITE !== 'false') writeBenchmarkSection('## Request path', markdown);
  } finally {
    for (const proc of processes) await stop(proc).catch(() => {});
    await handle.close();
    await database.release();
  }
}
