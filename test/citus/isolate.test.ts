/**
 * On Citus, tenants spread over both workers, and one organization moves to a shard group of its own while its API
 * traffic goes on: the admin CLI's `tenants isolate` (server/src/db/citus-tenants.ts `isolateTenant`: the group
 * split at the organization's hash value onto the other worker, `shard_transfer_mode => 'force_logical'`) fails no
 * request and loses nothing. Skipped unless `CITUS=1` (test/citus/cluster.ts).
 *
 * 20 organizations get a survey and responses each; the one to isolate gets more, and shares its shard group
 * with others. Then three loops of that organization's requests run through the SDK over real HTTP (create and
 * launch a survey, submit responses, PUT a respondent, read them back), with a fourth loop folding the survey's
 * response-count deltas as the API process does every 500 responses (a DELETE of `survey_response_counts`, a table
 * without a primary key: it needs the replica identity of 2026-11-26T0600 while its shard moves). The CLI runs
 * as an operator runs it, in a process of its own; the loops stop a moment after it returns. The API runs alone
 * (`role: 'api'`): the job workers' cron jobs would fold and compact at times of their own.
 *
 * Then: no request failed (a failure is listed with the server's error, and the checks go on); the organization
 * is alone in its new shards, on the other worker, and they hold its rows and no one else's; the other
 * organizations' rows are all there; every write the API acknowledged is readable through it, and a write that
 * failed was stored whole or not at all (counts, response ids, the analytics copy that a trigger of `responses`
 * writes, which the new shards must carry on).
 *
 * A fold is one statement whose CTEs delete and update. Citus reroutes to the new shards only the simplest
 * statements planned before the split's metadata switch and run after it; the others fail, this one with 40001
 * "shard for the given value does not exist" ("Retry the query"), which the API process's caller drops by design
 * (the deltas wait for the next fold). Such a fold is counted apart; any other failure fails the test.
 *
 * The duration depends on the cluster: the split's replication slot waits for every transaction open on the
 * source worker (any database) to end, and its subscription's apply process for a free background-worker slot on
 * the target (`max_worker_processes`, shared with one Citus maintenance daemon per database on the node).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SurveyServiceClient } from '@survey-service/sdk';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantPlacement, tenantSpread, type Isolation } from '../../server/src/db/citus-tenants.js';
import { foldResponseCounts } from '../../server/src/modules/surveys/repository.js';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';
import { citusMode } from './cluster.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const organizationCount = 20;
/** Concurrent request loops of the isolated organization. */
const loops = 3;
/** How long the loops keep going before the isolation starts; how many calls they make after it returned. */
const trafficBeforeMs = 1_500;
const trafficAfterCalls = loops * 10;

interface Call {
  name: string;
  status: number;
  started: number;
  ended: number;
  error?: string;
}

/** What the API acknowledged (2xx) for one survey of the loops, and how many of its writes failed. */
interface Created {
  surveyId: string;
  responseIds: string[];
  /** The respondent PUT for the survey's first response, when acknowledged. */
  externalId: string | null;
  /** Failed response submissions: each may or may not have been stored. */
  failedSubmissions: number;
  failedPut: boolean;
}

/** The tables rowsPerOrganization counts, in its order; `analytics_responses` is filled by a trigger of `responses`. */
const counted = ['surveys', 'responses', 'respondents', 'analytics_responses'] as const;

/** Rows per organization of the `counted` tables, joined by commas, counted over every shard. */
async function rowsPerOrganization(admin: pg.Client): Promise<Map<string, string>> {
  const counts = new Map<string, number[]>();
  for (const [i, table] of counted.entries()) {
    const { rows } = await admin.query<{ organization_id: string; n: number }>(
      `select organization_id, count(*)::int as n from ${table} group by 1`,
    );
    for (const row of rows) {
      const entry = counts.get(row.organization_id) ?? counted.map(() => 0);
      entry[i] = row.n;
      counts.set(row.organization_id, entry);
    }
  }
  return new Map([...counts].map(([organization, n]) => [organization, n.join(',')]));
}

/** `count(*)` and `count(distinct organization_id)` of one shard of `table`. */
async function shardContents(admin: pg.Client, table: string, shardId: number) {
  const { rows } = await admin.query<{ success: boolean; result: string }>(
    `select success, result from run_command_on_shards($1,
       $$select count(*) || ',' || count(distinct organization_id) || ',' || coalesce(min(organization_id), '')
         from %s$$) where shardid = $2`,
    [table, shardId],
  );
  const row = rows[0];
  if (!row?.success) throw new Error(`shard ${shardId} of ${table}: ${row?.result ?? 'not found'}`);
  const [count, organizations, organization] = row.result.split(',');
  return { rows: Number(count), organizations: Number(organizations), organization };
}

/** Runs the admin CLI as an operator does, on `databaseUrl`; `started` receives its process. */
function cli(databaseUrl: string, args: string[], started: (child: ChildProcess) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      path.join(repoRoot, 'node_modules/.bin/tsx'),
      ['scripts/cli.ts', ...args],
      { cwd: repoRoot, env: { ...process.env, DATABASE_URL: databaseUrl }, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
    started(child);
  });
}

describe.skipIf(!citusMode)('tenant isolation on Citus', () => {
  let t: TestService;
  let admin: pg.Client;
  let child: ChildProcess | undefined;
  /** The server's unexpected errors by request id, to say why a request failed. */
  const serverErrors = new Map<string, string>();
  beforeAll(async () => {
    const logger = pino(
      { level: 'error' },
      {
        write(line: string) {
          const entry = JSON.parse(line) as { requestId?: string; msg?: string; err?: { message?: string } };
          if (entry.requestId) serverErrors.set(entry.requestId, entry.err?.message ?? entry.msg ?? line);
        },
      },
    );
    t = await startTestService({ role: 'api', databasePoolSize: 8 }, logger);
    admin = new pg.Client({ connectionString: t.database.url });
    await admin.connect();
    // Notices of a crowded cluster (maintenance daemons that found no worker slot) are not this test's business.
    admin.on('notice', () => {});
  });
  afterAll(async () => {
    // Should the test end before the isolation does: nothing of it may outlive the database (a replication slot
    // on a worker keeps its WAL, and a subscription there stops the database from being dropped).
    if (child && child.exitCode === null) child.kill();
    if (admin) {
      await admin.query(
        `select pg_cancel_backend(pid) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and query ~ '(citus_split_shard_by_split_points|isolate_tenant_to_new_shard)'`,
      );
      await admin.query('call citus_cleanup_orphaned_resources()').catch(() => {});
      await admin.end();
    }
    await t?.close();
  });

  it('spreads tenants over both workers and isolates one while its traffic continues', async () => {
    // 20 organizations with rows of their own.
    const tenants = [];
    for (let i = 0; i < organizationCount; i++) tenants.push(await tenantWithRaisedLimits(t));
    await Promise.all(
      tenants.map(async ({ live }, i) => {
        const survey = await live.unwrap(live.POST('/api/v1/surveys', { body: surveyBody({ title: `Org ${i}` }) }));
        const id = { params: { path: { id: survey.id } } };
        await live.unwrap(live.POST('/api/v1/surveys/{id}/launch', id));
        for (let r = 0; r < 2; r++) {
          await live.unwrap(live.POST('/api/v1/surveys/{id}/responses', { ...id, body: { answers: validAnswers } }));
        }
      }),
    );

    const spread = await tenantSpread(t.db);
    const spreadSummary = JSON.stringify(
      spread.map(({ rowsByTable: _, ...node }) => node),
      null,
      2,
    );
    const workers = spread.filter((node) => node.shardGroups > 0);
    expect(workers.length, spreadSummary).toBe(2);
    for (const node of workers) {
      expect(node.organizations, spreadSummary).toBeGreaterThan(0);
      expect(node.rowsByTable.surveys, spreadSummary).toBeGreaterThan(0);
      expect(node.rowsByTable.responses, spreadSummary).toBeGreaterThan(0);
    }
    const totals = await admin.query<{ surveys: number; responses: number }>(
      'select (select count(*)::int from surveys) as surveys, (select count(*)::int from responses) as responses',
    );
    expect(workers.reduce((sum, node) => sum + node.rowsByTable.surveys!, 0)).toBe(totals.rows[0]!.surveys);
    expect(workers.reduce((sum, node) => sum + node.rowsByTable.responses!, 0)).toBe(totals.rows[0]!.responses);

    // The organization to isolate: one that shares its shard group, made the biggest.
    const placements = await Promise.all(tenants.map((tenant) => tenantPlacement(t.db, tenant.organizationId)));
    const index = placements.findIndex((p) => p.otherOrganizations > 0);
    expect(index, 'no shard group holds two organizations').toBeGreaterThanOrEqual(0);
    const big = tenants[index]!;
    const before = placements[index]!;
    const seeded: Created[] = [];
    for (let i = 0; i < 10; i++) {
      const done = await createAndAnswer(big.live, `seed-${i}`);
      if (!done?.externalId) throw new Error('seeding failed');
      seeded.push(done);
    }
    const rowsBefore = await rowsPerOrganization(admin);

    // Its traffic, continuous from before the isolation to after it.
    const calls: Call[] = [];
    const created: Created[] = [];
    const folds = { runs: 0, retried: 0, failures: [] as string[] };
    let stop = false;
    const call = async <T extends { response: Response; error?: unknown }>(name: string, request: () => Promise<T>) => {
      const started = performance.now();
      try {
        const result = await request();
        const status = result.response.status;
        calls.push({ name, status, started, ended: performance.now() });
        if (status >= 300) calls.at(-1)!.error = JSON.stringify(result.error);
        return result;
      } catch (error) {
        calls.push({ name, status: 0, started, ended: performance.now(), error: String(error) });
        return undefined;
      }
    };
    const traffic = async (loop: number) => {
      for (let i = 0; !stop; i++) {
        const done = await createAndAnswer(big.live, `L${loop}-${i}`, call);
        if (done) created.push(done);
      }
    };
    const folding = async () => {
      while (!stop) {
        const recent = created.at(-1) ?? seeded.at(-1);
        if (!recent) throw new Error('nothing seeded');
        try {
          await foldResponseCounts(t.db, {
            tenant: { organizationId: big.organizationId, environment: 'LIVE' },
            surveyId: recent.surveyId,
          });
          folds.runs++;
        } catch (error) {
          if ((error as { code?: string }).code === '40001') folds.retried++;
          else folds.failures.push(String(error));
        }
        // The folds' pace, not a wait for anything.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const running = [...Array.from({ length: loops }, (_, loop) => traffic(loop)), folding()];

    // Traffic before the isolation (the scenario, not a wait for anything).
    await new Promise((resolve) => setTimeout(resolve, trafficBeforeMs));
    const isolationStarted = performance.now();
    let isolation: Isolation;
    try {
      // As an operator runs it: the CLI, in a process of its own, on the service's database.
      const stdout = await cli(
        t.database.url,
        ['tenants', 'isolate', '--org', big.organizationId, '--json'],
        (started) => (child = started),
      );
      isolation = JSON.parse(stdout) as Isolation;
    } finally {
      const isolationEnded = performance.now();
      // Traffic after the isolation, before the failures are counted: calls started since, about a round of each loop.
      const since = () => calls.filter((c) => c.started > isolationEnded).length;
      await eventually(() => since() >= trafficAfterCalls, 60_000, 'traffic after the isolation');
      stop = true;
      await Promise.all(running);
      const during = calls.filter((c) => c.ended > isolationStarted && c.started < isolationEnded);
      const latencies = during.map((c) => c.ended - c.started).sort((a, b) => a - b);
      console.log(
        `isolation: ${Math.round(isolationEnded - isolationStarted)} ms (CLI process), ${calls.length} requests ` +
          `(${during.length} during the isolation, slowest ${Math.round(latencies.at(-1) ?? 0)} ms), ` +
          `${calls.filter((c) => c.status === 0 || c.status >= 300).length} failed; ` +
          `${created.length} surveys created; ${folds.runs} folds, ${folds.retried} retried (40001), ` +
          `${folds.failures.length} failed`,
      );
    }

    // Zero failed requests (soft: what follows says whether anything acknowledged was lost all the same).
    const failed = calls
      .filter((c) => c.status === 0 || c.status >= 300)
      .map((c) => {
        const requestId = /"requestId":"([^"]+)"/.exec(c.error ?? '')?.[1];
        return { ...c, server: requestId ? serverErrors.get(requestId) : undefined };
      });
    expect.soft(failed, JSON.stringify(failed.slice(0, 10), null, 2)).toEqual([]);
    expect.soft(folds.failures).toEqual([]);
    expect(calls.filter((c) => c.started > isolationStarted).length).toBeGreaterThan(0);

    // The organization is alone in a new shard group, on the other worker.
    expect(isolation).toMatchObject({ isolated: true, method: 'split' });
    const after = await tenantPlacement(t.db, big.organizationId);
    expect(after).toEqual(isolation.after);
    expect(after.isolated).toBe(true);
    expect(after.otherOrganizations).toBe(0);
    expect(after.shardId).not.toBe(before.shardId);
    expect(after.node).not.toBe(before.node);
    expect(workers.map((node) => node.node)).toContain(after.node);
    expect(Object.keys(after.shards).sort()).toEqual(Object.keys(before.shards).sort());
    for (const other of tenants.filter((tenant) => tenant !== big)) {
      expect((await tenantPlacement(t.db, other.organizationId)).shardId).not.toBe(after.shardId);
    }

    // Nothing lost: the other organizations' rows are all there, and every write the API acknowledged to this one
    // is readable through it; a write that failed may have been stored or not, never in part.
    const rowsAfter = await rowsPerOrganization(admin);
    for (const [organizationId, counts] of rowsBefore) {
      if (organizationId === big.organizationId) continue;
      expect(rowsAfter.get(organizationId), organizationId).toBe(counts);
    }
    const [surveysBefore, responsesBefore, respondentsBefore, analyticsBefore] = rowsBefore
      .get(big.organizationId)!
      .split(',')
      .map(Number);
    const [surveysAfter, responsesAfter, respondentsAfter, analyticsAfter] = rowsAfter
      .get(big.organizationId)!
      .split(',')
      .map(Number);
    const sum = (f: (c: Created) => number) => created.reduce((total, c) => total + f(c), 0);
    const failedCreates = failed.filter((c) => c.name === 'create survey').length;
    expect(surveysAfter! - surveysBefore!).toBeGreaterThanOrEqual(created.length);
    expect(surveysAfter! - surveysBefore!).toBeLessThanOrEqual(created.length + failedCreates);
    expect(responsesAfter! - responsesBefore!).toBeGreaterThanOrEqual(sum((c) => c.responseIds.length));
    expect(responsesAfter! - responsesBefore!).toBeLessThanOrEqual(
      sum((c) => c.responseIds.length + c.failedSubmissions),
    );
    expect(respondentsAfter! - respondentsBefore!).toBeGreaterThanOrEqual(sum((c) => (c.externalId ? 1 : 0)));
    expect(respondentsAfter! - respondentsBefore!).toBeLessThanOrEqual(
      sum((c) => (c.externalId || c.failedPut ? 1 : 0)),
    );
    // The analytics copy is written by a trigger of `responses`: the new shards have it.
    expect(analyticsBefore).toBe(responsesBefore);
    expect(analyticsAfter).toBe(responsesAfter);

    const list = await big.live.GET('/api/v1/surveys', { params: { query: { pageSize: 1 } } });
    expect(list.data?.pagination.totalItems).toBe(surveysAfter);
    const respondents = await big.live.GET('/api/v1/respondents', { params: { query: { pageSize: 1 } } });
    expect(respondents.data?.pagination.totalItems).toBe(respondentsAfter);
    for (const c of [...seeded, ...created]) {
      const id = { params: { path: { id: c.surveyId } } };
      const survey = await big.live.unwrap(big.live.GET('/api/v1/surveys/{id}', id));
      const responses = await big.live.unwrap(big.live.GET('/api/v1/surveys/{id}/responses', id));
      const stored = responses.map((r) => r.id);
      expect(stored, c.surveyId).toEqual(expect.arrayContaining(c.responseIds));
      expect(stored.length).toBeLessThanOrEqual(c.responseIds.length + c.failedSubmissions);
      expect(survey.responseCount, c.surveyId).toBe(stored.length);
      if (c.externalId) {
        const respondent = await big.live.unwrap(
          big.live.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: c.externalId } } }),
        );
        expect(respondent.email).toBe(`${c.externalId.toLowerCase()}@example.com`);
      }
    }

    // Its new shards hold its rows and no one else's.
    for (const [table, count] of [
      ['surveys', surveysAfter],
      ['responses', responsesAfter],
      ['respondents', respondentsAfter],
    ] as const) {
      const contents = await shardContents(admin, table, after.shards[table]!);
      expect(contents, table).toEqual({ rows: count, organizations: 1, organization: big.organizationId });
    }
  }, 180_000);
});

/**
 * One survey of `client`'s organization, created, launched, answered twice (once by a respondent it then PUTs)
 * and read back. Undefined when the survey was not created; a later step that fails ends the round (the failure is
 * in `calls`), and the survey is returned with what was acknowledged.
 */
async function createAndAnswer(
  client: SurveyServiceClient,
  tag: string,
  call: <T extends { response: Response; error?: unknown }>(
    name: string,
    request: () => Promise<T>,
  ) => Promise<T | undefined> = (_, request) => request(),
): Promise<Created | undefined> {
  const externalId = `E-${tag}`;
  const survey = await call('create survey', () =>
    client.POST('/api/v1/surveys', { body: surveyBody({ title: `Survey ${tag}` }) }),
  );
  const surveyId = survey?.data?.data.id;
  if (!surveyId) return undefined;
  const done: Created = { surveyId, responseIds: [], externalId: null, failedSubmissions: 0, failedPut: false };
  const id = { params: { path: { id: surveyId } } };
  if (!(await call('launch survey', () => client.POST('/api/v1/surveys/{id}/launch', id)))?.data) return done;
  for (const body of [{ answers: validAnswers, respondentExternalId: externalId }, { answers: validAnswers }]) {
    const response = await call('submit response', () =>
      client.POST('/api/v1/surveys/{id}/responses', { ...id, body }),
    );
    if (!response?.data) {
      done.failedSubmissions++;
      return done;
    }
    done.responseIds.push(response.data.data.id);
  }
  const upserted = await call('upsert respondent', () =>
    client.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId } },
      body: { email: `${externalId.toLowerCase()}@example.com`, firstName: 'Ada', department: 'Engineering' },
    }),
  );
  if (!upserted?.data) {
    done.failedPut = true;
    return done;
  }
  done.externalId = externalId;
  await call('get survey', () => client.GET('/api/v1/surveys/{id}', id));
  await call('get response', () =>
    client.GET('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: surveyId, responseId: done.responseIds[0]! } },
    }),
  );
  await call('list surveys', () => client.GET('/api/v1/surveys', {}));
  return done;
}
