/**
 * Citus benchmark: the request-path workloads — an authenticated list of 20 surveys and a response submission —
 * on plain PostgreSQL and on the local three-node Citus cluster (coordinator and two workers) in the same run, with
 * the Citus/plain ratio and the share of the cluster's distributed executions that ran on a single shard.
 *
 *   npm run bench -- citus       BENCH_SECONDS (default 5), BENCH_WARMUP_SECONDS (default 2), BENCH_CONNECTIONS
 *                                (default 50), BENCH_ORGANIZATIONS (default 20), BENCH_WRITE=false (print only)
 *
 * Plain PostgreSQL: DATABASE_URL's server, else 127.0.0.1:5432 as user postgres; a database is created there and
 * dropped. Citus: the cluster of test/citus/cluster.ts (`../shared/citus/cluster.sh`, or CITUS_CLUSTER_SCRIPT),
 * whose `createdb` makes a database on every node with the extension and the workers registered; it is migrated
 * (which distributes the tenant tables by organization_id) and dropped at the end. Without the script or a running
 * cluster the Citus half is skipped with a message (`bash <script> up` starts it) and BENCHMARKS.md is left alone.
 * CITUS_LOG_MULTI_SHARD=1 makes the nodes log each multi-shard plan with its statement (test/citus/cluster.ts).
 *
 * Each database gets the same seed: BENCH_ORGANIZATIONS tenants (so that both workers hold rows), the first one
 * measured (25 surveys, the list shows 20; one launched survey takes the submissions), every other one with 3
 * surveys and 5 responses. The API runs as `npm start` does, in its own process (ROLE=api, one process, started
 * afresh per database and stopped before the next), the load generator (autocannon) in this process, as in the
 * request-path bench. Before each measured run, after the warm-up, the Citus counters (`citus_stat_counters`,
 * which cluster.sh turns on) are reset on every node; after it they are read and summed over the nodes.
 */
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { clusterScript, clusterServerUrl, createCitusDatabase, dropCitusDatabase } from '../../test/citus/cluster.js';
import {
  benchApi,
  benchDatabase,
  benchTenant,
  startBenchService,
  writeBenchmarkSection,
  type BenchService,
} from './shared.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const organizations = Math.max(2, Number(process.env.BENCH_ORGANIZATIONS ?? 20));
const plainServer = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const questions = [
  { type: 'nps', text: 'How likely are you to recommend working here?' },
  { type: 'rating', text: 'I have the tools I need.' },
  { type: 'single_choice', text: 'Where do you work?', choices: [{ label: 'Office' }, { label: 'Home' }] },
  { type: 'text', text: 'What should we change?', required: false },
];
const answers = {
  answers: [
    { questionId: 'q_1', value: 9 },
    { questionId: 'q_2', value: 4 },
    { questionId: 'q_3', value: 'c_2' },
    { questionId: 'q_4', value: 'Fewer meetings.' },
  ],
};
const launchedSettings = { anonymous: true, allowMultipleResponses: true };

interface Counters {
  singleShard: number;
  multiShard: number;
  /** Of these, the executions planned on the coordinator: each a round trip to a worker (a hop between machines). */
  fromCoordinator: number;
}

interface Measure {
  workload: string;
  database: 'plain' | 'Citus';
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failures: number;
  statuses: string;
  counters: Counters | null;
}

interface Target {
  database: Measure['database'];
  url: string;
}

/** run_command_on_all_nodes over the coordinator and the workers; throws if a node failed. */
async function onAllNodes(admin: pg.Client, command: string): Promise<string[]> {
  const { rows } = await admin.query<{ nodeid: number; success: boolean; result: string }>(
    'select nodeid, success, result from run_command_on_all_nodes($1)',
    [command],
  );
  for (const row of rows) if (!row.success) throw new Error(`node ${row.nodeid}: ${row.result}`);
  return rows.map((row) => row.result);
}

/**
 * This database's distributed executions, summed over every node (a trigger's statement, or a statement of a
 * function delegated to a worker, counts on that worker), and those of the coordinator alone.
 */
async function readCounters(admin: pg.Client): Promise<Counters> {
  const { rows } = await admin.query<{ nodeid: number; success: boolean; result: string; coordinator: boolean }>(
    `select r.nodeid, r.success, r.result, n.groupid = 0 as coordinator
     from run_command_on_all_nodes($1) r join pg_dist_node n on n.nodeid = r.nodeid`,
    [
      `select query_execution_single_shard || ',' || query_execution_multi_shard
       from citus_stat_counters where name = current_database()`,
    ],
  );
  const total = { singleShard: 0, multiShard: 0, fromCoordinator: 0 };
  for (const row of rows) {
    if (!row.success) throw new Error(`node ${row.nodeid}: ${row.result}`);
    const [single, multi] = row.result.split(',').map(Number);
    total.singleShard += single ?? 0;
    total.multiShard += multi ?? 0;
    if (row.coordinator) total.fromCoordinator += (single ?? 0) + (multi ?? 0);
  }
  return total;
}

/**
 * The same tenants, surveys and responses on either database, the service's tenant the measured one; returns its
 * launched survey.
 */
async function seed(service: BenchService): Promise<string> {
  const { db, url: apiUrl, api } = service;
  for (let i = 0; i < 24; i++) await api('POST', '/api/v1/surveys', { title: `Pulse ${i}`, questions });
  const target = await api('POST', '/api/v1/surveys', { title: 'Target', questions, settings: launchedSettings });
  await api('POST', `/api/v1/surveys/${target.data.id}/launch`);
  for (let o = 1; o < organizations; o++) {
    const other = benchApi(apiUrl, (await benchTenant(db)).key);
    await other('POST', '/api/v1/surveys', { title: `Draft ${o}`, questions });
    await other('POST', '/api/v1/surveys', { title: `Draft ${o}b`, questions });
    const open = await other('POST', '/api/v1/surveys', { title: `Open ${o}`, questions, settings: launchedSettings });
    await other('POST', `/api/v1/surveys/${open.data.id}/launch`);
    for (let r = 0; r < 5; r++) await other('POST', `/api/v1/surveys/${open.data.id}/responses`, answers);
  }
  const list = await fetch(`${apiUrl}/api/v1/surveys?pageSize=20`, {
    headers: { authorization: `Bearer ${service.key}` },
  });
  const items = ((await list.json()) as { data: unknown[] }).data.length;
  if (items !== 20) throw new Error(`the measured list has ${items} items, not 20`);
  return target.data.id;
}

/** Organizations per worker: where each tenant's shard of the co-located tables lives. */
async function placement(admin: pg.Client, measured: string): Promise<string> {
  const { rows } = await admin.query<{ nodeport: number; organizations: number; measured: boolean }>(
    `select s.nodeport, count(*)::int as organizations, bool_or(o.id = $1) as measured
     from organizations o
     join citus_shards s on s.table_name = 'surveys'::regclass
      and s.shardid = get_shard_id_for_distribution_column('surveys', o.id)
     group by s.nodeport order by s.nodeport`,
    [measured],
  );
  return rows
    .map((r) => `${r.organizations} on the worker at port ${r.nodeport}${r.measured ? ' (the measured one too)' : ''}`)
    .join(', ');
}

/** The service's log lines at error level or above (pino JSON), for the report. */
function loggedErrors(output: string): string[] {
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50)
        errors.push(`${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`);
    } catch {
      // not a log line
    }
  }
  return errors;
}

async function measureOn(target: Target): Promise<{ results: Measure[]; placement: string | null; errors: string[] }> {
  const service = await startBenchService(target.database, { layout: 'api-process', databaseUrl: target.url });
  const admin = new pg.Client({ connectionString: target.url });
  try {
    await admin.connect();
    const targetId = await seed(service);
    const { organizationId, key } = service;
    const citus = target.database === 'Citus';
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const workloads: [string, autocannon.Options][] = [
      ['GET /api/v1/surveys?pageSize=20', { url: `${service.url}/api/v1/surveys?pageSize=20`, headers }],
      [
        'POST /api/v1/surveys/{id}/responses',
        {
          url: `${service.url}/api/v1/surveys/${targetId}/responses`,
          method: 'POST',
          headers,
          body: JSON.stringify(answers),
        },
      ],
    ];
    const results: Measure[] = [];
    for (const [workload, options] of workloads) {
      if (warmUpSeconds > 0) await autocannon({ connections, duration: warmUpSeconds, ...options });
      if (citus) await onAllNodes(admin, 'select citus_stat_counters_reset()');
      const result = await autocannon({ connections, duration: seconds, ...options });
      const counters = citus ? await readCounters(admin) : null;
      const statuses = Object.entries(result.statusCodeStats ?? {})
        .map(([status, stat]) => `${status}×${stat.count ?? 0}`)
        .join(' ');
      results.push({
        workload,
        database: target.database,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        requests: result.requests.total,
        failures: result.non2xx + result.errors,
        statuses,
        counters,
      });
      console.log(
        `${target.database} ${workload}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, statuses ${statuses || 'none'}, errors ${result.errors}` +
          (counters ? `, ${counters.singleShard} single-shard / ${counters.multiShard} multi-shard executions` : ''),
      );
    }
    return {
      results,
      placement: citus ? await placement(admin, organizationId) : null,
      errors: loggedErrors(service.apiProcess!.output()),
    };
  } finally {
    await admin.end().catch(() => {});
    await service.close();
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string; citus: boolean }>(
      `select current_setting('server_version') as version,
              exists (select 1 from pg_extension where extname = 'citus') as citus`,
    );
    const citus = rows[0]!.citus
      ? (await client.query<{ version: string }>(`select split_part(citus_version(), ' ', 2) as version`)).rows[0]!
          .version
      : null;
    return `PostgreSQL ${rows[0]!.version}${citus ? `, Citus ${citus}` : ''}`;
  } finally {
    await client.end();
  }
}

/**
 * A database on the Citus cluster, or why there is none: no cluster script, or no coordinator answering. A cluster
 * that answers but cannot make or migrate the database is an error, not a skip.
 */
async function citusDatabase(): Promise<{ name: string; url: string } | { skipped: string }> {
  const script = clusterScript();
  if (!existsSync(script)) return { skipped: `no cluster script at ${script} (set CITUS_CLUSTER_SCRIPT)` };
  try {
    const probe = new pg.Client({ connectionString: (await clusterServerUrl()).replace('{database}', 'postgres') });
    await probe.connect();
    await probe.end();
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    return { skipped: `the cluster's coordinator does not answer (start it with \`bash ${script} up\`): ${reason}` };
  }
  const name = `survey_bench_citus_${process.pid}`;
  return { name, url: await createCitusDatabase(name) };
}

function share(counters: Counters | null): string {
  if (!counters) return '—';
  const total = counters.singleShard + counters.multiShard;
  return total === 0 ? '—' : `${((100 * counters.singleShard) / total).toFixed(1)} %`;
}

export async function run(): Promise<void> {
  const load = loadavg()[0]!.toFixed(2);
  const plain = await benchDatabase('citus_plain', plainServer);
  let citus: { name: string; url: string } | { skipped: string } | undefined;
  try {
    citus = await citusDatabase();
    console.log(
      `Measuring ${seconds} s per workload (after ${warmUpSeconds} s of warm-up) at ${connections} connections, ${organizations} organizations (load ${load}, ${cpus().length} CPUs)…`,
    );
    const versions = {
      plain: await serverVersion(plain.url),
      citus: 'url' in citus ? await serverVersion(citus.url) : '',
    };
    const onPlain = await measureOn({ database: 'plain', url: plain.url });
    if ('skipped' in citus) {
      console.log(`\nCitus half skipped: ${citus.skipped}. BENCHMARKS.md is left as it was.`);
      return;
    }
    const onCitus = await measureOn({ database: 'Citus', url: citus.url });

    const results = [...onPlain.results, ...onCitus.results];
    const row = (r: Measure) => {
      const counters = r.counters;
      const perRequest = counters
        ? ((counters.singleShard + counters.multiShard) / Math.max(1, r.requests)).toFixed(1)
        : '—';
      const fromCoordinator = counters ? (counters.fromCoordinator / Math.max(1, r.requests)).toFixed(1) : '—';
      return `| ${r.workload} | ${r.database} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.failures} | ${counters?.singleShard ?? '—'} | ${counters?.multiShard ?? '—'} | ${share(counters)} | ${perRequest} | ${fromCoordinator} |`;
    };
    const ratios = onPlain.results.map((p, i) => {
      const c = onCitus.results[i]!;
      return `| ${p.workload} | ${(c.rps / p.rps).toFixed(2)} | ${(c.p50 / Math.max(p.p50, 1)).toFixed(2)} | ${(c.p99 / Math.max(p.p99, 1)).toFixed(2)} |`;
    });
    const statementsPerRequest = onCitus.results
      .map((r) => {
        const counters = r.counters!;
        const all = (counters.singleShard + counters.multiShard) / Math.max(1, r.requests);
        const remote = counters.fromCoordinator / Math.max(1, r.requests);
        return `${all.toFixed(1)} per ${r.workload.split(' ')[0]}, ${remote.toFixed(1)} of them from the coordinator`;
      })
      .join(', ');
    const multiShard = onCitus.results.reduce((sum, r) => sum + r.counters!.multiShard, 0);
    const errors = [...onPlain.errors.map((e) => `plain: ${e}`), ...onCitus.errors.map((e) => `Citus: ${e}`)];
    const markdown = [
      '## Citus',
      '',
      `\`npm run bench -- citus\`, ${new Date().toISOString().slice(0, 10)}: the request-path workloads on plain PostgreSQL and on a local Citus cluster (a coordinator and two workers on this machine, ${process.env.CITUS_SHARDS ?? 8} shards per distributed table) in the same run: ${seconds} s per row after ${warmUpSeconds} s of unrecorded warm-up, ${connections} connections, load generator (autocannon) in the bench process, the API (\`server/src/main.ts\`, ROLE=api, one process) in its own process, started afresh for each database. Plain: ${versions.plain}; cluster: ${versions.citus}. ${cpus().length} CPUs shared by everything, load average ${load} at the start (shared machine).`,
      '',
      `Same seed on both: ${organizations} organizations (the measured one with 25 surveys, the list shows 20, one launched survey takes the submissions; every other with 3 surveys and 5 responses). On the cluster, organizations per worker (the seeded ones and the demo organization the service makes at start): ${onCitus.placement}.`,
      '',
      '| workload | database | req/s | p50 ms | p99 ms | non-2xx/errors | single-shard | multi-shard | single-shard share | distributed executions / request | of which from the coordinator / request |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...results.map(row),
      '',
      '| workload | req/s Citus/plain | p50 Citus/plain | p99 Citus/plain |',
      '|---|---:|---:|---:|',
      ...ratios,
      '',
      'Executions are `citus_stat_counters` of the database, reset after the warm-up and summed over the three nodes (a statement that a trigger of `responses` runs on a worker counts there): single-shard is a plan of one task (one shard, or a reference table such as `api_keys`), multi-shard a plan of several. Statements on the tables local to the coordinator (`rate_limits`, pg-boss) are not distributed executions and are not counted. A statement that Citus cannot send whole to one shard (a data-modifying CTE, an INSERT … SELECT) is run in steps — subplans whose intermediate results are copied to the nodes, an INSERT … SELECT through the coordinator — each step a round trip of its own and counted here as an execution of its own, single-shard when it touches one shard: the executions per request count those steps, which the share of single-shard alone does not show. Those *from the coordinator* are the round trips between machines on a real cluster; the rest run on a worker on its own shards (the statements of a function Citus delegated to it, and of the triggers they fire), in-process there.',
      ...(errors.length > 0
        ? ['', `Errors in the service's log: ${errors.length} (first: ${errors.slice(0, 3).join('; ')}).`]
        : []),
      '',
      `What more cores would change. Here 2 cores are shared by the coordinator, both workers, the API process and the load generator (and whatever else runs on the machine: see the load average), so the run is CPU-bound and the ratio measures what a request costs on Citus against plain PostgreSQL, not scale-out. Each execution on a distributed table is planned by Citus and run on the worker that holds the shard, those from the coordinator over a connection, a round trip each (executions per request here: ${statementsPerRequest}), so one request costs more CPU and more latency in total than on a single server, and the workers' share of that work runs on the same 2 cores. With the nodes on machines (or cores) of their own, the execution and storage of each tenant's rows happen on the worker that holds its shard, so that work divides among the workers as tenants spread over them, and adding workers (and rebalancing shards) adds capacity; what stays on the coordinator is planning and routing every statement, the rate-limit counters (\`rate_limits\` is local to it) and pg-boss, so the coordinator becomes the part to size (the workers accept distributed queries too, Citus keeping its metadata on every node, but \`rate_limits\` and pg-boss live on the coordinator only). The round trips do not shrink with cores: between machines each is a network hop rather than loopback, which adds to a request's latency once per execution. ${multiShard === 0 ? 'Every measured execution ran on a single shard: no request visited every shard' : `${multiShard} measured executions ran on several shards: each visits every shard, so its work grows with the workers instead of dividing among them`}.`,
    ].join('\n');
    console.log(`\n${markdown}`);
    if (errors.length > 0) console.log(`\nService log errors:\n${errors.join('\n')}`);
    if (process.env.BENCH_WRITE !== 'false') {
      writeBenchmarkSection('## Citus', markdown);
      console.log('Written to BENCHMARKS.md.');
    }
  } finally {
    if (citus && 'name' in citus) await dropCitusDatabase(citus.name);
    await plain.release();
  }
}
