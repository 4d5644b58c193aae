/**
 * The database goes away under load, as managed PostgreSQL does (minor upgrades, failovers, crashes, idle
 * connections killed by a proxy), and comes back. On its own embedded PostgreSQL, which this file stops, crashes
 * and starts (never the run's shared server), with the service as separate OS processes (API and worker):
 * - restarted fast (`pg_ctl restart -m fast`: SIGINT to the postmaster), crashed (`pg_ctl stop -m immediate`:
 *   SIGQUIT) and every backend of the database terminated from inside (`pg_terminate_backend`), each while
 *   submissions (retried with their Idempotency-Key, as a careful client does), a sync, an export, a link
 *   distribution's answers and webhook deliveries are under way;
 * - asserted: no process exits, no 500; 503 `unavailable` with Retry-After (API) and a "back in a moment" page
 *   (answer page) while it is gone; readiness 503 and liveness 200; service back within 5 s of the database; every
 *   acknowledged submission stored exactly once, counted by analytics, exported once and delivered by webhook;
 *   every job finished once; a key revoked while the listeners were away refused at once; one log line per change
 *   of state, none per request;
 * - and a rolling restart of two API processes (SIGHUP) under keep-alive load fails no request; neither of them
 *   exits when their connections are killed.
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, waitForSyncJob, type SurveyServiceClient } from '@survey-service/sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';
import { eventually } from '../helpers/eventually.js';
import { freePortBelowEphemeral } from '../helpers/ports.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dataDir: string;
let port: number;
let postgres: EmbeddedPostgres;
let service: ServiceProcess;
let receiver: Receiver;
let liveKey: string;
let client: SurveyServiceClient;
let surveyId: string;
let link: string;

async function sql<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []) {
  const connection = new pg.Client({ connectionString: postgres.url });
  await connection.connect();
  try {
    return (await connection.query<Row>(text, values)).rows;
  } finally {
    await connection.end();
  }
}

const startPostgres = () => startEmbeddedPostgres({ dataDir, port });

function postmasterPid(): number {
  return Number(readFileSync(path.join(postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Everything a client saw: statuses, refusals that broke a promise, and acknowledged submissions by key. */
interface Observed {
  statuses: Map<string, number>;
  problems: string[];
  acknowledged: Map<string, string>;
}

const observed: Observed = { statuses: new Map(), problems: [], acknowledged: new Map() };
const count = (what: string) => observed.statuses.set(what, (observed.statuses.get(what) ?? 0) + 1);

/** Checks a 503 as the contract promises it: the envelope's `unavailable`, with Retry-After. */
async function check503(response: Response, where: string): Promise<void> {
  const body = (await response.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
  if (body?.error?.code !== 'unavailable' || !response.headers.get('retry-after'))
    observed.problems.push(`${where}: 503 without the envelope's unavailable or Retry-After`);
}

/**
 * Submissions from `workers` loops, each retried with its Idempotency-Key until acknowledged: after a 503 or a
 * broken connection (the commit's outcome unknown), and after 409 idempotency_in_progress.
 */
function submissions(workers: number): { stop(): Promise<void> } {
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const key = crypto.randomUUID();
      // A retry sends the identical request: the same key with another body would be a conflict (409).
      const body = JSON.stringify({ answers: [{ questionId: 'q_1', value: observed.acknowledged.size % 11 }] });
      for (;;) {
        const started = Date.now();
        try {
          const response = await fetch(`${service.url}/api/v1/surveys/${surveyId}/responses`, {
            method: 'POST',
            headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json', 'idempotency-key': key },
            body,
            signal: AbortSignal.timeout(15_000),
          });
          if (Date.now() - started > 10_000) observed.problems.push(`a submission took ${Date.now() - started} ms`);
          count(String(response.status));
          if (response.status === 201 || response.status === 200) {
            observed.acknowledged.set(key, ((await response.json()) as { data: { id: string } }).data.id);
            break;
          }
          if (response.status === 503) await check503(response, 'submission');
          else if (response.status === 409) {
            const refusal = (await response.json()) as { error: { code: string } };
            if (refusal.error.code !== 'idempotency_in_progress')
              observed.problems.push(`submission: 409 ${refusal.error.code}`);
          } else observed.problems.push(`submission: ${response.status} ${await response.text()}`);
        } catch (error) {
          count(`network: ${String((error as Error).cause ?? error)}`);
        }
        // A careful client's pause before it retries (the load's pace, not a wait for anything).
        await sleep(100);
      }
    }
  };
  const loops = Array.from({ length: workers }, loop);
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** While the database is gone: the probes, the API and the answer page say so, quickly. */
async function whileDown(): Promise<void> {
  const started = Date.now();
  const ready = await fetch(`${service.url}/health/ready`);
  expect(ready.status).toBe(503);
  await check503(ready, 'readiness');
  expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
  const me = await fetch(`${service.url}/api/v1/me`, { headers: { authorization: `Bearer ${liveKey}` } });
  expect(me.status).toBe(503);
  await check503(me, 'GET /me');
  const page = await fetch(link, { headers: { 'accept-language': 'de' } });
  expect(page.status).toBe(503);
  expect(page.headers.get('retry-after')).toBeTruthy();
  expect(await page.text()).toContain('Gleich wieder da');
  expect(Date.now() - started).toBeLessThan(10_000);
}

/** Milliseconds from `since` until a new request (a fresh key) is acknowledged. */
async function recovery(since: number): Promise<number> {
  return eventually(
    async () => {
      const response = await fetch(`${service.url}/api/v1/surveys/${surveyId}/responses`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${liveKey}`,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify({ answers: [{ questionId: 'q_1', value: 10 }] }),
      }).catch(() => undefined);
      if (response?.status === 201) {
        const key = crypto.randomUUID();
        observed.acknowledged.set(key, ((await response.json()) as { data: { id: string } }).data.id);
        return Date.now() - since;
      }
      await response?.body?.cancel();
    },
    30_000,
    'a new submission acknowledged',
  );
}

type Fault = 'restart-fast' | 'crash' | 'terminate-backends';

/** Does `fault` to the database; resolves once it accepts connections again, with when that was. */
async function inject(fault: Fault, duringOutage: () => Promise<void>): Promise<number> {
  if (fault === 'terminate-backends') {
    await sql(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid()`,
    );
    await duringOutage();
    return Date.now();
  }
  if (fault === 'restart-fast') {
    await postgres.stop();
  } else {
    const pid = postmasterPid();
    process.kill(pid, 'SIGQUIT');
    await eventually(() => !alive(pid), 30_000, 'the postmaster exits after SIGQUIT');
  }
  await duringOutage();
  // The outage itself: the database stays away for a second (the point, not a wait for anything).
  await sleep(1_000);
  postgres = await startPostgres();
  return Date.now();
}

/** Records per sync: enough that a sync is still at work when the fault hits it. */
const SYNC_SIZE = 10_000;
let syncs = 0;
async function startSync(): Promise<string> {
  syncs++;
  const people = Array.from({ length: SYNC_SIZE }, (_, i) => ({
    externalId: `S${syncs}-${i}`,
    email: `s${syncs}.${i}@example.com`,
    department: ['Engineering', 'Sales'][i % 2],
  }));
  return (
    await client.unwrap(client.POST('/api/v1/respondents/sync', { body: { mode: 'append', respondents: people } }))
  ).jobId;
}

async function startExport(): Promise<string> {
  return (
    await client.unwrap(
      client.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: surveyId } },
        body: { format: 'ndjson' },
      }),
    )
  ).id;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'outage-pg-'));
  // Reachable by the postgres OS user when run as root, so the data stays here (and goes with `rm`) instead of
  // being relocated under /var/tmp (db/embedded.ts).
  await chmod(dataDir, 0o755);
  port = await freePortBelowEphemeral();
  postgres = await startPostgres();
  receiver = await startReceiver();
  service = await startServiceProcess({
    databaseUrl: postgres.url,
    env: { LOG_LEVEL: 'info', DATABASE_RECONNECT_MAX_DELAY_MS: '1000', WEBHOOK_TIMEOUT_MS: '2000' },
  });
  liveKey = /^LIVE key: (\S+)$/m.exec(service.output())![1]!;
  await sql('update organizations set rate_limit_per_minute = 1000000, rate_limit_per_day = 100000000');
  client = createClient({ apiKey: liveKey, baseUrl: service.url! });
  await client.unwrap(
    client.POST('/api/v1/webhooks', { body: { url: receiver.url('/hook'), events: ['response.submitted'] } }),
  );
  const survey = await client.unwrap(
    client.POST('/api/v1/surveys', {
      body: { title: 'Outage', questions: [{ type: 'nps', text: 'How likely are you to recommend us?' }] },
    }),
  );
  surveyId = survey.id;
  await client.unwrap(client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } }));
  await client.unwrap(
    client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'kiosk-1' } },
      body: { email: 'kiosk.1@example.com' },
    }),
  );
  const distribution = await client.unwrap(
    client.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: { method: 'link' } },
    }),
  );
  await eventually(
    async () =>
      (await sql(`select 1 from distribution_recipients where distribution_id = $1`, [distribution.id])).length > 0,
    30_000,
    'the link distribution is sent',
  );
  const recipients = await client.unwrap(
    client.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
      params: { path: { surveyId, distributionId: distribution.id } },
    }),
  );
  // The link names the configured origin (PORT=0 here): the same path on the address the service listens on.
  link = `${service.url}${new URL(recipients[0]!.link!).pathname}`;
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await postgres?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the database going away', () => {
  it('under load: no exit, no 500, 503 while gone, back within 5 s, every acknowledged write and job once', async () => {
    const jobs: Array<{ syncJobId: string; exportId: string }> = [];
    const recoveries: Record<string, number> = {};
    const inFlight: string[] = [];
    const revokable = await client.unwrap(
      client.POST('/api/v1/api-keys', { body: { name: 'revoked while away', scopes: ['surveys:read'] } }),
    );
    const useRevokable = () =>
      fetch(`${service.url}/api/v1/surveys`, { headers: { authorization: `Bearer ${revokable.key}` } });
    expect((await useRevokable()).status).toBe(200); // cached in the API process from here on

    for (const fault of ['restart-fast', 'crash', 'terminate-backends'] as const) {
      const load = submissions(4);
      jobs.push({ syncJobId: await startSync(), exportId: await startExport() });
      // The fault hits the sync at work: as soon as it is seen processing (however fast the machine runs it).
      const syncJobId = jobs.at(-1)!.syncJobId;
      const statusOf = async () =>
        (
          await client.unwrap(
            client.GET('/api/v1/respondents/sync/{jobId}', { params: { path: { jobId: syncJobId } } }),
          )
        ).status;
      // After 5 s still pending, the fault hits it all the same.
      const syncAtFault = await eventually(
        async () => {
          const status = await statusOf();
          return status !== 'pending' && status;
        },
        5_000,
        'the sync to start',
        10,
      ).catch((error: Error) => {
        if (error.name !== 'TimeoutError') throw error;
        return 'pending' as const;
      });
      inFlight.push(syncAtFault);
      const upAt = await inject(fault, async () => {
        if (fault === 'terminate-backends') {
          // The listeners are reconnecting: a key revoked now (by plain SQL, announced to nobody) must be refused
          // at once, not after the cache bound.
          await sql(`update api_keys set revoked_at = now() where id = $1`, [revokable.id]);
          // Never served again: 503 while a killed connection is met, then 401 (not after the cache bound).
          const refused = await eventually(
            async () => {
              const answer = await useRevokable();
              return answer.status !== 503 && answer;
            },
            5_000,
            'an answer other than 503 to the revoked key',
            0,
          );
          expect(refused.status).toBe(401);
        } else {
          await whileDown();
        }
      });
      recoveries[fault] = await recovery(upAt);
      // The load goes on past the recovery, until 4 more of its submissions are acknowledged.
      const acknowledgedAtRecovery = observed.acknowledged.size;
      await eventually(
        () => observed.acknowledged.size >= acknowledgedAtRecovery + 4,
        30_000,
        'the load acknowledged again',
      );
      await load.stop();
      expect(service.child.exitCode, `the service exited after ${fault}:\n${service.output().slice(-3000)}`).toBeNull();
    }
    expect(recoveries['restart-fast']).toBeLessThan(5_000);
    expect(recoveries.crash).toBeLessThan(5_000);
    expect(recoveries['terminate-backends']).toBeLessThan(5_000);
    expect((await useRevokable()).status).toBe(401);

    // Every job started before a fault finished, once.
    for (const { syncJobId, exportId } of jobs) {
      const job = await waitForSyncJob(client, syncJobId, { timeoutMs: 60_000 });
      expect(job.status).toBe('completed');
      await eventually(
        async () =>
          (await client.unwrap(client.GET('/api/v1/exports/{exportId}', { params: { path: { exportId } } }))).status ===
          'completed',
        60_000,
        `export ${exportId} completes`,
      );
      const events = await sql<{ type: string; n: number }>(
        `select type, count(*)::int as n from events
         where coalesce(data->>'jobId', data->>'id') in ($1, $2) and type like '%.completed'
         group by type order by type`,
        [syncJobId, exportId],
      );
      expect(events).toEqual([
        { type: 'respondents.sync.completed', n: 1 },
        { type: 'responses.export.completed', n: 1 },
      ]);
    }
    // The faults hit syncs at work (not only queued or done ones).
    expect(inFlight).toContain('processing');
    const synced = await sql<{ n: number }>(`select count(*)::int as n from respondents where external_id like 'S%'`);
    expect(synced[0]!.n).toBe(3 * SYNC_SIZE);

    // Every acknowledged submission is stored exactly once: no lost acknowledgement, no duplicate from a retry.
    const stored = await sql<{ id: string }>(`select id from responses where survey_id = $1`, [surveyId]);
    const storedIds = stored.map((row) => row.id).sort();
    expect(new Set(storedIds).size).toBe(storedIds.length);
    expect(storedIds).toEqual([...new Set(observed.acknowledged.values())].sort());
    // …counted exactly by analytics (the copy written with each response), and exported exactly once by a new export.
    const analytics = await client.unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/static', { params: { path: { id: surveyId } } }),
    );
    expect(analytics.responseCount).toBe(storedIds.length);
    const after = await startExport();
    await eventually(
      async () =>
        (await client.unwrap(client.GET('/api/v1/exports/{exportId}', { params: { path: { exportId: after } } })))
          .status === 'completed',
      60_000,
      'the export after the faults completes',
    );
    const download = await fetch(`${service.url}/api/v1/exports/${after}/download`, {
      headers: { authorization: `Bearer ${liveKey}` },
    });
    expect(download.status).toBe(200);
    const exported = (await download.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { id: string }).id);
    expect(exported.sort()).toEqual(storedIds);
    // …and each reached the webhook receiver (at least once; a repeat carries the same webhook-id).
    await eventually(
      () => {
        const delivered = new Set(
          receiver.received('/hook').map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id),
        );
        return storedIds.every((id) => delivered.has(id));
      },
      60_000,
      'every stored response is delivered by webhook',
    );

    // A 500 is an unmapped error: the service's error lines name it (pino level 50), in the failure's message.
    const errorLines = () =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":50'))
        .slice(0, 5)
        .map((line) => line.slice(0, 2000))
        .join('\n');
    expect(observed.problems, errorLines()).toEqual([]);
    expect([...observed.statuses.keys()].filter((status) => /^5/.test(status) && status !== '503')).toEqual([]);
    expect(observed.statuses.get('503') ?? 0).toBeGreaterThan(0);

    // The log: one line when the database goes and one when it is back, never one per request.
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; requestId?: string });
    const wentAway = lines.filter((line) => line.msg.startsWith('database unavailable'));
    const cameBack = lines.filter((line) => line.msg === 'database reachable again');
    // The restart and the crash each refused connections for a second; killed connections with the database up
    // may pass unremarked (the pool opens new ones at once).
    expect(wentAway.length).toBeGreaterThanOrEqual(2);
    expect(wentAway.length).toBeLessThanOrEqual(6);
    expect(cameBack.length).toBe(wentAway.length);
    expect(lines.filter((line) => line.level >= 40 && line.requestId)).toEqual([]);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 240_000);

  it('a rolling restart of two API processes (SIGHUP) under keep-alive load fails no request', async () => {
    const rolling = await startServiceProcess({
      databaseUrl: postgres.url,
      env: { LOG_LEVEL: 'info', API_PROCESSES: '2', ROLE: 'api' },
    });
    try {
      let stopped = false;
      const failures: string[] = [];
      let answered = 0;
      // Requests each client has had answered (200 or not): the observable that the load has run.
      const requests = [0, 0, 0, 0];
      const loop = async (client: number) => {
        while (!stopped) {
          try {
            const response = await fetch(`${rolling.url}/api/v1/me`, {
              headers: { authorization: `Bearer ${liveKey}` },
            });
            await response.arrayBuffer();
            if (response.status === 200) answered++;
            else failures.push(String(response.status));
          } catch (error) {
            failures.push(String((error as Error).cause ?? error));
          }
          requests[client]!++;
        }
      };
      const loops = requests.map((_, client) => loop(client));
      /** Until every client has made `more` requests after this call. */
      const loadRuns = (more: number, what: string) => {
        const from = [...requests];
        return eventually(() => requests.every((n, client) => n >= from[client]! + more), 30_000, what);
      };
      await loadRuns(25, 'the load under way');
      rolling.child.kill('SIGHUP');
      await eventually(() => /rolling restart done/.test(rolling.output()), 60_000, 'the rolling restart finishes');
      // Every client's connections now go to the new processes, whatever became of those to the old ones.
      await loadRuns(25, 'the load after the restart');
      stopped = true;
      await Promise.all(loops);
      expect(failures).toEqual([]);
      expect(answered).toBeGreaterThan(100);
      expect(rolling.output().match(/rolling: an API process drains/g)).toHaveLength(2);

      // The API processes, too, outlive their connections' loss: none exits (the primary would start another).
      const killed = await sql<{ pid: number; application_name: string }>(
        `select pid, application_name, pg_terminate_backend(pid) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()`,
      );
      const listener = 'survey-service-key-cache';
      await eventually(
        async () => {
          const me = await fetch(`${rolling.url}/api/v1/me`, { headers: { authorization: `Bearer ${liveKey}` } });
          await me.arrayBuffer();
          return me.status === 200;
        },
        5_000,
        'a request served after the connections were killed',
        0,
      );
      // Each process's key-cache listener (one per API process, the other service's too) reconnects once it has
      // met the loss: as many listeners as were killed, all on new connections, mean every process has been through
      // it. An API process that exited instead was logged before the primary started its successor.
      const listeners = killed.filter((row) => row.application_name === listener).length;
      expect(listeners).toBeGreaterThanOrEqual(2);
      await eventually(
        async () => {
          const now = await sql<{ pid: number }>(
            `select pid from pg_stat_activity where datname = current_database() and application_name = $1`,
            [listener],
          );
          return now.length === listeners && now.every((row) => !killed.some((gone) => gone.pid === row.pid));
        },
        30_000,
        'the key-cache listeners reconnected',
      );
      expect(rolling.output()).not.toMatch(/an API process exited/);
    } finally {
      expect(await rolling.stop()).toBe(0);
    }
  }, 120_000);
});
