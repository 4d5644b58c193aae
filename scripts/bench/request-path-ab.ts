/**
 * Same-run A/B of the request path: the API of two checkouts (each with its node_modules) on one database, the
 * same requests as `request-path` (a submission, or the 20-survey list with AB_WHAT=list) measured against each in
 * turn, in interleaved rounds, with the service's and PostgreSQL's CPU per request from /proc. On a shared machine
 * the absolute figures move with the load; the two trees' ratio in one run is what to read.
 *
 *   AB_TREES=/path/before,/path/after npm run bench -- request-path-ab   (default: /work/main and this checkout)
 *   AB_WHAT=submit|list, BENCH_SECONDS (5), BENCH_ROUNDS (4), BENCH_WARMUP_SECONDS (10),
 *   AB_NODE_OPTIONS (e.g. --perf-basic-prof, for `perf record -p`), AB_HOLD=1 (keep the database and services up
 *   after the warm-up, printing their addresses, until SIGUSR2: for EXPLAIN and pg_stat_database by hand).
 * Both services migrate the same database at start: the trees must agree on the migrations.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { cpuTicks, median, startApiProcess, startBenchService, tickMicros, type ApiProcess } from './shared.js';

const trees = (process.env.AB_TREES ?? `/work/main,${process.cwd()}`).split(',');
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const warm = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const what = process.env.AB_WHAT ?? 'submit';

/** CPU time in µs of `root` and its descendants (see cpuTicks). */
const cpuMicros = (root: number) => cpuTicks([root]) * tickMicros;

const nodeOptions = process.env.AB_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
export async function run(): Promise<void> {
  // The first tree's API with the database and the tenant; every other tree's API on the same database.
  const env = { API_PROCESSES: '1' };
  const first = await startBenchService('ab', { layout: 'api-process', env, nodeOptions, cwd: trees[0] });
  const services: ApiProcess[] = [first.apiProcess!];
  try {
    for (const tree of trees.slice(1))
      services.push(await startApiProcess(first.databaseUrl, { env, nodeOptions, cwd: tree }));
    const { key } = first;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const questions = [
      { type: 'nps', text: 'How likely are you to recommend working here?' },
      { type: 'rating', text: 'I have the tools I need.' },
      { type: 'single_choice', text: 'Where do you work?', choices: [{ label: 'Office' }, { label: 'Home' }] },
      { type: 'text', text: 'What should we change?', required: false },
    ];
    const api = async (method: string, p: string, body?: unknown) => {
      const r = await fetch(`${services[0]!.url}${p}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!r.ok) throw new Error(await r.text());
      return (await r.json()) as { data: { id: string } };
    };
    for (let i = 0; i < 49; i++) await api('POST', '/api/v1/surveys', { title: `Pulse ${i}`, questions });
    const target = await api('POST', '/api/v1/surveys', {
      title: 'Target',
      questions,
      settings: { anonymous: true, allowMultipleResponses: true },
    });
    await api('POST', `/api/v1/surveys/${target.data.id}/launch`);
    const submit = JSON.stringify({
      answers: [
        { questionId: 'q_1', value: 9 },
        { questionId: 'q_2', value: 4 },
        { questionId: 'q_3', value: 'c_2' },
        { questionId: 'q_4', value: 'Fewer meetings.' },
      ],
    });
    const { rows } = await sql<{
      setting: string;
    }>`select setting from pg_settings where name = 'data_directory'`.execute(first.db);
    const pg = Number(readFileSync(`${rows[0]!.setting}/postmaster.pid`, 'utf8').split('\n')[0]);
    const opts = (url: string): autocannon.Options =>
      what === 'list'
        ? { url: `${url}/api/v1/surveys?pageSize=20`, headers }
        : { url: `${url}/api/v1/surveys/${target.data.id}/responses`, method: 'POST', headers, body: submit };
    for (const s of services) await autocannon({ connections: 50, duration: warm, ...opts(s.url) });
    if (process.env.AB_HOLD) {
      console.log(`HOLD ${first.databaseUrl} survey ${target.data.id} key ${key} url ${services[0]!.url}`);
      await new Promise((resolve) => process.once('SIGUSR2', resolve));
    }
    const results = services.map(() => [] as { rps: number; svc: number; db: number }[]);
    for (let r = 0; r < rounds; r++)
      for (const [i, s] of services.entries()) {
        const b = { svc: cpuMicros(s.child.pid!), db: cpuMicros(pg) };
        const res = await autocannon({ connections: 50, duration: seconds, ...opts(s.url) });
        const n = res.requests.total;
        const m = {
          rps: res.requests.average,
          svc: (cpuMicros(s.child.pid!) - b.svc) / n,
          db: (cpuMicros(pg) - b.db) / n,
        };
        results[i]!.push(m);
        console.log(
          `round ${r} ${trees[i]}: ${Math.round(m.rps)}/s svc ${Math.round(m.svc)} µs db ${Math.round(m.db)} µs non2xx ${res.non2xx}`,
        );
      }
    for (const [i, rs] of results.entries())
      console.log(
        `MEDIAN ${trees[i]}: ${Math.round(median(rs.map((x) => x.rps)))}/s svc ${Math.round(median(rs.map((x) => x.svc)))} µs db ${Math.round(median(rs.map((x) => x.db)))} µs`,
      );
  } finally {
    for (const s of services.slice(1)) await s.stop();
    await first.close();
  }
}
