/**
 * On Citus (`CITUS=1`), a worker is added to a running cluster and `citus_rebalance_start` moves shard groups onto it
 * (`shard_transfer_mode => 'auto'`: logical replication, docs/decisions/0067) while the API takes traffic: 6 SDK
 * clients submit responses (each with an `Idempotency-Key` of its own), 2 read surveys, responses and analytics, and
 * a loop runs the fold and compaction statements of the worker role's jobs (UPDATE and DELETE of the
 * `REPLICA IDENTITY FULL` tables while their shards move). Skipped unless `CITUS=1` (test/citus/cluster.ts).
 *
 * On a private cluster (its own directory and ports, made by the run's cluster script), never the run's shared one:
 * the other test files expect its three nodes, and a fourth node would be given shards of their databases by any
 * later rebalance. `destroy` stops and deletes all four nodes at the end.
 *
 * Then: every call ended in its expected success and the SDK retried none (each retry is recorded with its cause);
 * every read during the move saw at least what had been acknowledged before it started, and no more than was sent;
 * afterwards every acknowledged submission is readable with its answer, each survey's `responseCount` and analytics
 * (count, NPS distribution, daily counts) equal exactly what was acknowledged, the typed analytics copy has a row per
 * response, and a replay of acknowledged submissions with their keys gets the stored answer (the idempotency records
 * moved with their shards). Shard groups moved to the new node (`pg_dist_placement`), with every co-located table,
 * by logical replication (its slots were seen on the source workers), each background task ran once, and nothing
 * was left behind (slots, publications, subscriptions, cleanup records). Last, what a service start does after a
 * rebalance: the column option that moves drop is set on every shard again.
 *
 * A fold (one multi-shard statement with CTEs) may fail once at a move's switch, as the job's may (pg-boss runs it
 * again); any other failure of the loop fails the test. The summary printed at the end gives the timeline (tasks,
 * in ms from the start of add-worker), latencies per phase and on the moving groups, and the errors in the nodes'
 * logs (none from a request means the request path's once-more retry was not needed).
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { createClient, type SurveyServiceClient } from '@survey-service/sdk';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../server/src/config.js';
import { hintShardStatistics } from '../../server/src/db/citus.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { compactSegmentCounts } from '../../server/src/modules/analytics/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { foldResponseCounts } from '../../server/src/modules/surveys/repository.js';
import { startProcess, type RunningProcess } from '../../server/src/start.js';
import { eventually } from '../helpers/eventually.js';
import { freePortBelowEphemeral } from '../helpers/ports.js';
import { citusMode, clusterScript } from './cluster.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Organizations with traffic per shard group (every group has some, so whichever groups move carry traffic). */
const perShardGroup = 2;
/** Responses per survey before the traffic starts: rows for the moves to copy, and above the anonymity threshold. */
const seededPerSurvey = 30;
/** Concurrent clients: submitting, and reading. */
const writers = 6;
const readers = 2;
/** How long the traffic runs before the worker is added; how many calls it makes after the rebalance returned. */
const trafficBeforeMs = 2_000;
const trafficAfterCalls = 200;
/** Acknowledged submissions replayed with their keys afterwards (a sample: each is a request). */
const replays = 200;
const databaseName = 'rebalance';
/** Failures of a multi-shard statement that a shard move caused: its plan met a placement that moved. */
const movedUnder =
  /intermediate result|could not find valid entry for shard|shard for the given value does not exist|\(40001\)/;

let directory: string;
let port: number;
let service: RunningProcess | undefined;
let admin: pg.Client | undefined;
let databaseUrl: string;

/** The private cluster's script: the run's, pointed at its own directory and ports. */
async function cluster(...args: string[]): Promise<string> {
  const { stdout } = await run('bash', [clusterScript(), ...args], {
    env: { ...process.env, CITUS_DIR: directory, CITUS_PORT: String(port) },
    maxBuffer: 1 << 20,
  });
  return stdout.trim();
}

const bindable = (p: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(p, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A coordinator port whose next three are free too: two workers, and the one `add-worker` starts at port + 3. */
async function fourFreePorts(): Promise<number> {
  for (;;) {
    const first = await freePortBelowEphemeral();
    let free = true;
    for (let p = first + 1; p <= first + 3 && free; p++) free = await bindable(p);
    if (free) return first;
  }
}

/** A client of one worker node's maintenance database, for what only the node itself shows. */
async function nodeClient(nodePort: number): Promise<pg.Client> {
  const client = new pg.Client({ host: '127.0.0.1', port: nodePort, user: 'postgres', database: 'postgres' });
  await client.connect();
  return client;
}

interface Tenant {
  organizationId: string;
  client: SurveyServiceClient;
  surveyId: string;
  /** Acknowledged submissions: response id → what was sent. */
  acknowledged: Map<string, { key: string; value: number }>;
  /** Submissions sent (acknowledged or not), for the upper bound of a read. */
  sent: number;
  shardId: string;
}

interface Call {
  name: string;
  /** What the cluster was doing when the call started. */
  phase: string;
  /** The shard group of the organization called for. */
  shardId: string;
  status: number;
  started: number;
  ended: number;
  error?: string;
}

/** One try the SDK made again, and why. */
interface Retry {
  method: string;
  url: string;
  status: number | undefined;
  error: string;
}

/** Placements of the co-location group's shards (one table stands for its group): shard id → node port. */
async function placements(client: pg.Client): Promise<Map<string, number>> {
  const { rows } = await client.query<{ shardid: string; nodeport: number }>(
    `select p.shardid::text, n.nodeport from pg_dist_placement p
     join pg_dist_node n using (groupid) join pg_dist_shard s using (shardid)
     where s.logicalrelid = 'surveys'::regclass order by 1`,
  );
  return new Map(rows.map((row) => [row.shardid, row.nodeport]));
}

beforeAll(async () => {
  if (!citusMode) return;
  directory = `/var/tmp/citus-rebalance-${process.pid}`;
  port = await fourFreePorts();
  await cluster('up');
  databaseUrl = await cluster('createdb', databaseName);
  admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  // Notices of the rebalancer and of a crowded node are not this test's business.
  admin.on('notice', () => {});
}, 300_000);

afterAll(async () => {
  if (!citusMode) return;
  await service?.close().catch(() => undefined);
  await admin?.end().catch(() => undefined);
  // All four nodes, the added one included (`destroy` stops every node directory it finds).
  await cluster('destroy').catch(() => undefined);
  await rm(directory, { recursive: true, force: true });
});

describe.skipIf(!citusMode)('adding a Citus worker and rebalancing online', () => {
  it('moves shard groups to the new worker while clients submit and read: no failed call, no lost write', async () => {
    const db = admin!;
    // The service, in this process: the API alone (the maintenance loop below stands for the job workers, at a
    // known pace). Its unexpected errors are kept by request id, and its warnings (a database found unreachable).
    const serverErrors = new Map<string, string>();
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      {
        write(line: string) {
          const entry = JSON.parse(line) as { requestId?: string; msg?: string; err?: { message?: string } };
          if (entry.requestId) serverErrors.set(entry.requestId, entry.err?.message ?? entry.msg ?? line);
          else warnings.push(entry.err?.message ?? entry.msg ?? line);
        },
      },
    );
    const config: Config = {
      ...loadConfig([]),
      port: 0,
      host: '127.0.0.1',
      validateResponses: true,
      role: 'api',
      shutdownGraceMs: 5_000,
      databasePoolSize: 10,
    };
    // Its start migrates the database, which distributes the tables.
    service = await startProcess(config, databaseUrl, logger);
    const baseUrl = service.url!;

    // Every table that moves with the shard groups, and every reference table copied to the new node, can publish
    // its UPDATEs and DELETEs (a primary key, or REPLICA IDENTITY FULL): what lets `shard_transfer_mode => 'auto'`
    // move them by logical replication (docs/decisions/0067-citus-online-rebalancing.md).
    // Partitioned tables hold no rows; a table of another kind, or an inheritance parent, would make Citus fall back
    // to blocking writes for its whole group.
    const unpublishable = await db.query<{ table: string }>(
      `select t.table_name::text as table from citus_tables t join pg_class c on c.oid = t.table_name
       where t.citus_table_type in ('distributed', 'reference') and not (c.relkind = 'p' or (
         c.relkind = 'r' and not exists (select 1 from pg_inherits where inhparent = c.oid) and (
           c.relreplident = 'f'
           or (c.relreplident = 'd' and exists (select 1 from pg_index where indrelid = c.oid and indisprimary))
           or (c.relreplident = 'i' and exists (select 1 from pg_index where indrelid = c.oid and indisreplident)))))`,
    );
    expect(unpublishable.rows).toEqual([]);

    // Clients: every attempt's status is recorded, and every retry the SDK makes, with its cause.
    const retries: Retry[] = [];
    const attempts = new Map<number, number>();
    const sdk = (apiKey: string) =>
      createClient({
        apiKey,
        baseUrl,
        fetch: async (request) => {
          const response = await globalThis.fetch(request);
          attempts.set(response.status, (attempts.get(response.status) ?? 0) + 1);
          return response;
        },
        retry: {
          onRetry: (event) =>
            retries.push({
              method: event.method,
              url: event.url,
              status: event.response?.status,
              error: String((event.error as Error)?.message ?? event.error),
            }),
        },
      });

    // Organizations on every shard group, two per group, so that whichever groups move carry traffic; each with a
    // launched one-question survey.
    const { rows: groups } = await db.query<{ n: number }>(
      `select count(*)::int as n from pg_dist_shard where logicalrelid = 'surveys'::regclass`,
    );
    const shardGroups = groups[0]!.n;
    const byShard = new Map<string, string[]>();
    for (
      let made = 0;
      [...byShard.values()].filter((ids) => ids.length >= perShardGroup).length < shardGroups;
      made++
    ) {
      if (made > 200) throw new Error(`organizations over shard groups: ${JSON.stringify([...byShard])}`);
      const organization = await insertOrganization(service.deps.db, { name: `Rebalance ${made}`, plan: 'BUSINESS' });
      const { rows } = await db.query<{ shardid: string }>(
        `select get_shard_id_for_distribution_column('surveys', $1::text)::text as shardid`,
        [organization.id],
      );
      const ids = byShard.get(rows[0]!.shardid) ?? [];
      if (ids.length < perShardGroup) byShard.set(rows[0]!.shardid, [...ids, organization.id]);
    }
    const tenants: Tenant[] = [];
    for (const [shardId, organizationIds] of byShard) {
      for (const organizationId of organizationIds) {
        await service.deps.db
          .updateTable('organizations')
          .set({ rate_limit_per_minute: 1_000_000, rate_limit_per_day: 100_000_000 })
          .where('id', '=', organizationId)
          .execute();
        const { key } = await insertKey(service.deps.db, {
          organizationId,
          environment: 'LIVE',
          name: 'rebalance',
          scopes: ['*'],
          expiresAt: null,
        });
        const client = sdk(key);
        const survey = await client.unwrap(
          client.POST('/api/v1/surveys', {
            body: { title: 'Pulse', questions: [{ type: 'nps', text: 'Would you recommend us?' }] },
          }),
        );
        await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: survey.id } } }));
        tenants.push({ organizationId, client, surveyId: survey.id, acknowledged: new Map(), sent: 0, shardId });
      }
    }

    const calls: Call[] = [];
    let phase: 'seeding' | 'before' | 'adding' | 'rebalancing' | 'after' = 'seeding';
    /** When the worker's addition started: the origin of the timeline printed at the end. */
    let addStarted = 0;
    const acknowledgedByPhase = new Map<string, number>();
    const call = async <T extends { response: Response; error?: unknown }>(
      name: string,
      tenant: Tenant,
      request: () => Promise<T>,
    ) => {
      const started = performance.now();
      const { shardId } = tenant;
      const startedIn = phase;
      try {
        const result = await request();
        const status = result.response.status;
        calls.push({ name, phase: startedIn, shardId, status, started, ended: performance.now() });
        if (status >= 300) {
          const requestId = /"requestId":"([^"]+)"/.exec(JSON.stringify(result.error))?.[1];
          calls.at(-1)!.error =
            `${JSON.stringify(result.error)} ${requestId ? (serverErrors.get(requestId) ?? '') : ''}`;
        }
        return result;
      } catch (error) {
        calls.push({
          name,
          phase: startedIn,
          shardId,
          status: 0,
          started,
          ended: performance.now(),
          error: String(error),
        });
        return undefined;
      }
    };
    let counter = 0;
    const submit = async (tenant: Tenant) => {
      const value = counter++ % 11;
      const key = crypto.randomUUID();
      tenant.sent++;
      const result = await call('submit response', tenant, () =>
        tenant.client.POST('/api/v1/surveys/{id}/responses', {
          params: { path: { id: tenant.surveyId }, header: { 'Idempotency-Key': key } },
          body: { answers: [{ questionId: 'q_1', value }] },
        }),
      );
      if (result?.response.status === 201 && result.data) {
        tenant.acknowledged.set(result.data.data.id, { key, value });
        acknowledgedByPhase.set(phase, (acknowledgedByPhase.get(phase) ?? 0) + 1);
      }
    };
    await Promise.all(
      tenants.map(async (tenant) => {
        for (let i = 0; i < seededPerSurvey; i++) await submit(tenant);
      }),
    );
    expect(calls.filter((c) => c.status !== 201)).toEqual([]);

    // What a read saw that it must not have: less than was acknowledged before it started, more than was sent by its
    // end, or a stored response that cannot be read back as sent.
    const staleReads: string[] = [];
    const withheld = new Map<string, number>();
    let stop = false;
    const writing = async (loop: number) => {
      for (let i = loop; !stop; i += writers) await submit(tenants[i % tenants.length]!);
    };
    const reading = async (loop: number) => {
      for (let i = loop; !stop; i += readers) {
        const tenant = tenants[i % tenants.length]!;
        const id = { params: { path: { id: tenant.surveyId } } };
        const acknowledged = tenant.acknowledged.size;
        const [responseId, sent] = [...tenant.acknowledged].at(-1)!;
        const survey = await call('get survey', tenant, () => tenant.client.GET('/api/v1/surveys/{id}', id));
        const count = survey?.data?.data.responseCount;
        if (count !== undefined && count < acknowledged) staleReads.push(`responseCount ${count} < ${acknowledged}`);
        if (count !== undefined && count > tenant.sent) staleReads.push(`responseCount ${count} > ${tenant.sent} sent`);
        const response = await call('get response', tenant, () =>
          tenant.client.GET('/api/v1/surveys/{id}/responses/{responseId}', {
            params: { path: { id: tenant.surveyId, responseId } },
          }),
        );
        const answer = response?.data?.data.answers[0]?.value;
        if (response?.data && answer !== sent.value) staleReads.push(`response ${responseId}: ${String(answer)}`);
        await call('list responses', tenant, () =>
          tenant.client.GET('/api/v1/surveys/{id}/responses', {
            ...id,
            params: { ...id.params, query: { pageSize: 20 } },
          }),
        );
        const analytics = await call('static analytics', tenant, () =>
          tenant.client.GET('/api/v1/surveys/{id}/analytics/static', id),
        );
        // A live result polled around a few new responses is withheld by the release audit (docs/decisions/0027):
        // counted, not compared.
        const figures = analytics?.data?.data;
        if (figures?.suppressed) {
          const reason = String(figures.suppressionReason);
          withheld.set(reason, (withheld.get(reason) ?? 0) + 1);
        } else if (figures && figures.responseCount < acknowledged) {
          staleReads.push(`analytics responseCount ${figures.responseCount} < ${acknowledged}`);
        }
      }
    };
    // As the worker role's jobs do (every minute and every 10 minutes), at a pace that meets the moves.
    const maintenance = { runs: 0, runsAfter: 0, failures: [] as string[] };
    const maintaining = async () => {
      while (!stop) {
        for (const [name, work] of [
          ['fold', () => foldResponseCounts(service!.deps.db)],
          ['compact', () => compactSegmentCounts(service!.deps.db)],
        ] as const) {
          try {
            await work();
            maintenance.runs++;
            if (phase === 'after') maintenance.runsAfter++;
          } catch (error) {
            const at = Math.round(performance.now() - addStarted);
            const code = (error as { code?: string }).code;
            maintenance.failures.push(`${name} (${phase}, ${at} ms): ${String(error)} (${code})`);
          }
        }
        // The maintenance's pace, not a wait for anything.
        await sleep(500);
      }
    };

    // Logical replication slots of shard moves seen on the workers while the rebalance runs.
    const workersBefore = [port + 1, port + 2];
    const watchers = await Promise.all(workersBefore.map(nodeClient));
    // Its own connection: `db` waits in citus_rebalance_wait() meanwhile.
    const coordinator = new pg.Client({ connectionString: databaseUrl });
    await coordinator.connect();
    const slotsSeen = new Set<string>();
    let watching = true;
    let nodeAddedAt = 0;
    const taskTimes = new Map<string, number>();
    const watchSlots = async () => {
      while (watching) {
        for (const watcher of watchers) {
          const { rows } = await watcher.query<{ slot_name: string }>(
            `select slot_name from pg_replication_slots where slot_name like 'citus_shard_move_slot_%'`,
          );
          for (const row of rows) slotsSeen.add(`${watcher.port}:${row.slot_name}`);
        }
        // When each of the rebalance's tasks was first seen running, and done.
        const { rows: taskRows } = await coordinator.query<{ task_id: string; status: string }>(
          'select task_id::text, status::text from pg_dist_background_task',
        );
        for (const task of taskRows) {
          const key = `${task.task_id}:${task.status}`;
          if (!taskTimes.has(key)) taskTimes.set(key, performance.now() - addStarted);
        }
        if (!nodeAddedAt) {
          const { rows } = await coordinator.query('select 1 from pg_dist_node where nodeport = $1', [port + 3]);
          if (rows.length > 0) nodeAddedAt = performance.now();
        }
        // The watch's pace, not a wait for anything.
        await sleep(100);
      }
    };

    const before = await placements(db);
    const rowsBefore = await db.query<{ n: number }>('select count(*)::int as n from responses');
    phase = 'before';
    // The longest stall of this process's event loop (the service's and the clients') per phase, to tell a slow
    // database from a busy process.
    const loopStalls = new Map<string, number>();
    let tick = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      loopStalls.set(phase, Math.max(loopStalls.get(phase) ?? 0, Math.round(now - tick - 20)));
      tick = now;
    }, 20);
    const running = [
      ...Array.from({ length: writers }, (_, loop) => writing(loop)),
      ...Array.from({ length: readers }, (_, loop) => reading(loop)),
      maintaining(),
    ];
    // Traffic before the worker is added (the scenario, not a wait for anything).
    await sleep(trafficBeforeMs);

    const watching$ = watchSlots();
    phase = 'adding';
    addStarted = performance.now();
    let newPort: number;
    let rebalanceStarted: number;
    let rebalanceEnded: number;
    let jobId: string;
    try {
      newPort = Number(await cluster('add-worker', databaseName));
      phase = 'rebalancing';
      rebalanceStarted = performance.now();
      const started = await db.query<{ job: string }>(
        `select citus_rebalance_start(shard_transfer_mode => 'auto')::text as job`,
      );
      jobId = started.rows[0]!.job;
      await db.query('select citus_rebalance_wait()');
      rebalanceEnded = performance.now();
      phase = 'after';
      // Traffic after the rebalance, before anything is counted: calls started since.
      const since = () => calls.filter((c) => c.started > rebalanceEnded).length;
      await eventually(() => since() >= trafficAfterCalls, 60_000, 'traffic after the rebalance');
    } finally {
      stop = true;
      watching = false;
      clearInterval(ticker);
      await Promise.all(running);
      await watching$;
      await Promise.all([...watchers, coordinator].map((client) => client.end()));
    }

    const tasks = await db.query<{
      task_id: string;
      status: string;
      retry_count: number | null;
      message: string;
      command: string;
    }>(
      `select task_id::text, status::text, retry_count, message, command from pg_dist_background_task
       where job_id = $1 order by task_id`,
      [jobId],
    );
    const after = await placements(db);
    const moved = [...after].filter(([shard, nodePort]) => before.get(shard) !== nodePort);
    const movedShards = new Set(moved.map(([shard]) => shard));
    const movedTenants = tenants.filter((tenant) => movedShards.has(tenant.shardId));
    const failed = calls.filter((c) => c.status === 0 || c.status >= 300);
    // What the nodes logged as errors meanwhile (numbers masked), by node: statements that failed inside the service
    // or Citus without a client seeing it (a request run once more after a move, a failed maintenance run).
    const nodeErrors = new Map<string, number>();
    for (const nodePort of [port, ...workersBefore, newPort!]) {
      const log = await readFile(`${directory}/node${nodePort}.log`, 'utf8').catch(() => '');
      for (const [, message] of log.matchAll(/ERROR: {2}(.*)/g)) {
        const key = `${nodePort}: ${message!.replace(/\d+/g, 'N')}`;
        nodeErrors.set(key, (nodeErrors.get(key) ?? 0) + 1);
      }
    }
    // The column option every service start sets on each shard (server/src/db/citus.ts): whether the moved shards
    // kept it.
    const columnOptions = async () =>
      (
        await db.query<{ nodeport: number; result: string }>(
          `select n.nodeport, r.result from run_command_on_shards('survey_response_counts',
             $$select coalesce(array_to_string(attoptions, ','), '') from pg_attribute
               where attrelid = '%s'::regclass and attname = 'survey_id'$$) r
           join pg_dist_placement p using (shardid) join pg_dist_node n using (groupid)`,
        )
      ).rows.map((row) => ({ ...row, hinted: row.result.split(',').includes('n_distinct=-1') }));
    const hintedAfterMoves = await columnOptions();
    const percentiles = (of: Call[]) => {
      const ms = of.map((c) => c.ended - c.started).sort((a, b) => a - b);
      const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] ?? 0);
      return `${of.length} calls, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`;
    };
    const inPhase = (p: string) => calls.filter((c) => c.phase === p);
    const rebalancing = inPhase('rebalancing');
    const onMovedShards = rebalancing.filter((c) => movedShards.has(c.shardId));
    const overASecond = (of: Call[]) => of.filter((c) => c.ended - c.started > 1_000).length;
    const ms = (at: number | undefined) => (at === undefined ? '?' : String(Math.round(at)));
    const timeline = tasks.rows
      .map((t) => {
        const command = t.command.replace(/^SELECT pg_catalog\./, '');
        return `${command} ${ms(taskTimes.get(`${t.task_id}:running`))}..${ms(taskTimes.get(`${t.task_id}:done`))}`;
      })
      .join(', ');
    console.log(
      [
        `worker ${newPort!} added in ${ms(rebalanceStarted - addStarted)} ms (in pg_dist_node at ` +
          `${ms(nodeAddedAt - addStarted)} ms); rebalance ${ms(rebalanceEnded - rebalanceStarted)} ms; tasks (ms ` +
          `from the start of add-worker): ${timeline}`,
        `${moved.length} of ${before.size} shard groups moved to ${newPort!}, with ${movedTenants.length} of ` +
          `${tenants.length} organizations; replication slots seen: ${[...slotsSeen].join(', ')}`,
        `traffic: ${calls.length} calls, ${failed.length} failed, ${retries.length} SDK retries; attempts by status ` +
          `${JSON.stringify(Object.fromEntries([...attempts].sort()))}; acknowledged submissions by phase ` +
          `${JSON.stringify(Object.fromEntries(acknowledgedByPhase))}`,
        ...['before', 'adding', 'rebalancing', 'after'].map(
          (p) => `  ${p}: ${percentiles(inPhase(p))}, event loop stalled up to ${loopStalls.get(p) ?? 0} ms`,
        ),
        `  rebalancing, on the moving groups: ${percentiles(onMovedShards)}; over 1 s: ` +
          `${overASecond(onMovedShards)} on the moving groups, ` +
          `${overASecond(rebalancing) - overASecond(onMovedShards)} on the others`,
        `analytics withheld by the release audit: ${JSON.stringify(Object.fromEntries(withheld))}; maintenance: ` +
          `${maintenance.runs} runs (${maintenance.runsAfter} after), failures ` +
          `${JSON.stringify(maintenance.failures)}; server warnings ${JSON.stringify(warnings.slice(0, 5))}`,
        `survey_response_counts.survey_id n_distinct = -1 after the moves: on ` +
          `${hintedAfterMoves.filter((row) => row.hinted && row.nodeport !== newPort).length} of ` +
          `${hintedAfterMoves.filter((row) => row.nodeport !== newPort).length} shards that stayed, ` +
          `${hintedAfterMoves.filter((row) => row.hinted && row.nodeport === newPort).length} of ` +
          `${hintedAfterMoves.filter((row) => row.nodeport === newPort).length} that moved`,
        `errors in the nodes' logs: ${JSON.stringify(Object.fromEntries(nodeErrors), null, 1)}`,
      ].join('\n'),
    );

    // No call failed, none was retried; reads during the move saw every acknowledged write.
    expect.soft(failed, JSON.stringify(failed.slice(0, 10), null, 2)).toEqual([]);
    expect.soft(retries, JSON.stringify(retries.slice(0, 10), null, 2)).toEqual([]);
    expect.soft(staleReads).toEqual([]);
    // The maintenance statements span every shard: at a move's switch one may fail, as the jobs' may (they run
    // again, and leave the deltas to the next run); anything else fails the test, and it works after the move.
    expect.soft(maintenance.failures.filter((f) => !movedUnder.test(f))).toEqual([]);
    expect(maintenance.runsAfter).toBeGreaterThan(0);
    expect(onMovedShards.filter((c) => c.name === 'submit response' && c.status === 201).length).toBeGreaterThan(0);

    // The rebalance ran every task once, and shard groups moved to the new worker by logical replication.
    expect(tasks.rows.length).toBeGreaterThan(1);
    expect(tasks.rows.filter((t) => t.status !== 'done' || (t.retry_count ?? 0) > 0)).toEqual([]);
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.every(([, nodePort]) => nodePort === newPort!)).toBe(true);
    const perNode = new Map<number, number>();
    for (const nodePort of after.values()) perNode.set(nodePort, (perNode.get(nodePort) ?? 0) + 1);
    expect([...perNode.keys()].sort()).toEqual([...workersBefore, newPort!].sort());
    expect(Math.max(...perNode.values()) - Math.min(...perNode.values())).toBeLessThanOrEqual(1);
    expect(slotsSeen.size).toBeGreaterThan(0);
    expect(movedTenants.length).toBeGreaterThan(0);
    // Every table of the group has each shard on the same node as `surveys`' shard of the same range.
    const strays = await db.query(
      `select s.logicalrelid::text, s.shardid from pg_dist_shard s join pg_dist_placement p using (shardid)
       join pg_dist_partition t using (logicalrelid)
       join pg_dist_shard g on g.logicalrelid = 'surveys'::regclass and g.shardminvalue = s.shardminvalue
       join pg_dist_placement gp on gp.shardid = g.shardid
       where t.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'surveys'::regclass)
         and p.groupid <> gp.groupid`,
    );
    expect(strays.rows).toEqual([]);

    // Nothing lost: every acknowledged submission is stored and readable, and every count agrees exactly.
    const acknowledgedTotal = tenants.reduce((sum, tenant) => sum + tenant.acknowledged.size, 0);
    const rowsAfter = await db.query<{ responses: number; analytics: number }>(
      `select (select count(*)::int from responses) as responses,
              (select count(*)::int from analytics_responses) as analytics`,
    );
    expect(rowsAfter.rows[0]).toEqual({ responses: acknowledgedTotal, analytics: acknowledgedTotal });
    expect(rowsAfter.rows[0]!.responses - rowsBefore.rows[0]!.n).toBe(
      acknowledgedTotal - tenants.length * seededPerSurvey,
    );
    for (const tenant of tenants) {
      const { client, surveyId } = tenant;
      const id = { params: { path: { id: surveyId } } };
      const stored = new Map<string, unknown>();
      for await (const response of client.paginate('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId }, query: { pageSize: 100 } },
      }))
        stored.set(response.id, response.answers[0]?.value);
      const expected = new Map([...tenant.acknowledged].map(([responseId, sent]) => [responseId, sent.value]));
      expect(stored, tenant.organizationId).toEqual(expected);
      const survey = await client.unwrap(client.GET('/api/v1/surveys/{id}', id));
      expect(survey.responseCount, tenant.organizationId).toBe(tenant.acknowledged.size);
      // The figures in full, which the release audit would withhold after the live reads (as the figure tests do).
      for (const table of ['analytics_released_sets', 'analytics_release_audits']) {
        await db.query(`delete from ${table} where organization_id = $1 and survey_id = $2`, [
          tenant.organizationId,
          surveyId,
        ]);
      }
      const analytics = await client.unwrap(client.GET('/api/v1/surveys/{id}/analytics/static', id));
      expect(analytics.suppressionReason).toBeNull();
      expect(analytics.responseCount).toBe(tenant.acknowledged.size);
      expect(analytics.daily.reduce((sum, day) => sum + day.count, 0)).toBe(tenant.acknowledged.size);
      const nps = analytics.questions[0]!;
      if (nps.type !== 'nps') throw new Error(`question type ${nps.type}`);
      const distribution = Array.from({ length: 11 }, () => 0);
      for (const sent of tenant.acknowledged.values()) distribution[sent.value]!++;
      expect(nps.distribution.map((entry) => entry.count)).toEqual(distribution);
    }

    // The idempotency records moved with their shards: a replay gets the stored answer, and stores nothing new.
    const sample = tenants
      .flatMap((tenant) => [...tenant.acknowledged].map(([responseId, sent]) => ({ tenant, responseId, ...sent })))
      .filter((_, i, all) => i % Math.max(1, Math.floor(all.length / replays)) === 0);
    const replayed: string[] = [];
    for (const { tenant, responseId, key, value } of sample) {
      const result = await tenant.client.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: tenant.surveyId }, header: { 'Idempotency-Key': key } },
        body: { answers: [{ questionId: 'q_1', value }] },
      });
      const replay = result.response.headers.get('idempotent-replayed');
      if (result.response.status !== 201 || replay !== 'true' || result.data?.data.id !== responseId)
        replayed.push(`${responseId}: ${result.response.status} replayed=${replay} ${result.data?.data.id}`);
    }
    expect(replayed).toEqual([]);
    expect((await db.query<{ n: number }>('select count(*)::int as n from responses')).rows[0]!.n).toBe(
      acknowledgedTotal,
    );

    // The moves left nothing behind: no slot, publication or subscription on any worker, no cleanup pending.
    await db.query('call citus_cleanup_orphaned_resources()');
    expect((await db.query('select * from pg_dist_cleanup')).rows).toEqual([]);
    for (const nodePort of [...workersBefore, newPort!]) {
      const node = new pg.Client({ host: '127.0.0.1', port: nodePort, user: 'postgres', database: databaseName });
      await node.connect();
      try {
        const { rows } = await node.query(
          `select 'slot ' || slot_name as left from pg_replication_slots
           union all select 'publication ' || pubname from pg_publication
           union all select 'subscription ' || subname from pg_subscription`,
        );
        expect(rows, String(nodePort)).toEqual([]);
      } finally {
        await node.end();
      }
    }

    // What a service start does after a rebalance (README, "Scaling out"): the option is on every shard again.
    await hintShardStatistics(service.deps.db);
    expect((await columnOptions()).filter((row) => !row.hinted)).toEqual([]);
  }, 240_000);
});
