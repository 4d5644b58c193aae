/**
 * On Citus, a privacy request stays on its tenant's shard: its four operations through HTTP and its job (an access
 * request and an erasure of a person with data everywhere, see fixtures.ts, run here by the runner itself), and a
 * retention run over the same tenant (its policy, preview and batches) execute no multi-shard query on any node
 * (`citus_stat_counters`, summed over every node, as in test/citus/single-shard.test.ts). The world is built with a
 * worker running; the worker is stopped before the counters are reset, so only the API and the runner called here
 * run in the measured window. Skipped unless `CITUS=1`.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { createLogger } from '../../server/src/logger.js';
import { runPrivacyRequest } from '../../server/src/modules/privacy/runner.js';
import { insertRun } from '../../server/src/modules/retention/repository.js';
import { runRetention } from '../../server/src/modules/retention/runner.js';
import { newId } from '../../server/src/lib/ids.js';
import { startProcess, type RunningProcess } from '../../server/src/start.js';
import { citusMode } from '../citus/cluster.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { ada, buildWorld, type World } from './fixtures.js';

/** This database's distributed executions, summed over the coordinator and the workers. */
async function counters(admin: pg.Client): Promise<{ singleShard: number; multiShard: number }> {
  const { rows } = await admin.query<{ result: string; success: boolean; nodeid: number }>(
    `select nodeid, success, result from run_command_on_all_nodes($$
       select query_execution_single_shard || ',' || query_execution_multi_shard
       from citus_stat_counters where name = current_database()$$)`,
  );
  const total = { singleShard: 0, multiShard: 0 };
  for (const row of rows) {
    if (!row.success) throw new Error(`citus_stat_counters on node ${row.nodeid}: ${row.result}`);
    const [single, multi] = row.result.split(',').map(Number);
    total.singleShard += single!;
    total.multiShard += multi!;
  }
  return total;
}

describe.skipIf(!citusMode)('privacy requests on Citus', () => {
  let t: TestService;
  let admin: pg.Client;
  let w: World;

  beforeAll(async () => {
    t = await startTestService({ role: 'api' });
    admin = new pg.Client({ connectionString: t.database.url });
    await admin.connect();
    const worker: RunningProcess = await startProcess(
      {
        ...loadConfig([]),
        role: 'worker',
        port: 0,
        host: '127.0.0.1',
        validateResponses: true,
        shutdownGraceMs: 5_000,
        allowLoopbackWebhooks: true,
        databasePoolSize: 3,
      },
      t.database.url,
      createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    );
    try {
      w = await buildWorld(t);
    } finally {
      await worker.close();
    }
  }, 300_000);
  afterAll(async () => {
    await w?.receiver.close();
    await admin?.end();
    await t?.close();
  });

  it('runs every statement of a request, its operations and its job, on one shard', { timeout: 240_000 }, async () => {
    const run = async (requestId: string) =>
      runPrivacyRequest(t.service.deps, { requestId, organizationId: w.organizationId, environment: 'LIVE' });

    await admin.query(`select nodeid from run_command_on_all_nodes($$select citus_stat_counters_reset()$$)`);
    const before = await counters(admin);
    expect(before.multiShard).toBe(0);

    const access = await w.live.privacy.requests.create({ type: 'access', subject: { externalId: ada.externalId } });
    expect(await run(access.id)).toBe('finished');
    const done = await w.live.privacy.requests.get(access.id);
    expect(done.status).toBe('completed');
    expect(await w.live.privacy.requests.list({ type: 'access' })).toHaveLength(1);
    const file = await w.live.privacy.requests.download(access.id);
    expect(file.status).toBe(200);
    await file.arrayBuffer();

    for (const dryRun of [true, false]) {
      const erasure = await w.live.privacy.requests.create({
        type: 'erasure',
        subject: { email: ada.email },
        scope: 'identity_and_responses',
        dryRun,
      });
      expect(await run(erasure.id)).toBe('finished');
      const erased = await w.live.privacy.requests.get(erasure.id);
      expect(erased.status).toBe('completed');
      expect(erased.inventory).toMatchObject({ respondents: 1, exportFiles: 1, accessFiles: 1 });
    }

    // A retention run over the tenant: its policy, its preview and every batch of its job. Today's run is started
    // here for the one tenant (the daily job's list of tenants is its one query across them).
    const tenant = { organizationId: w.organizationId, environment: 'LIVE' as const };
    await sql`update responses set submitted_at = now() - interval '400 days'
      where organization_id = ${w.organizationId} and environment = 'LIVE'`.execute(t.db);
    await w.live.privacy.retention.update({
      responses: { afterDays: 365, basis: 'submission', action: 'delete' },
      exportFiles: { afterDays: 1 },
    });
    const { wouldRemove } = await w.live.privacy.retention.preview();
    expect(wouldRemove.deletedResponses).toBeGreaterThan(0);
    const retention = await insertRun(t.db, tenant, newId('ret'), new Date().toISOString().slice(0, 10));
    expect(await runRetention(t.service.deps, { runId: retention!.id, ...tenant })).toBe('finished');
    expect((await w.live.privacy.retention.get()).lastRun).toMatchObject({ status: 'completed', removed: wouldRemove });

    const after = await counters(admin);
    expect(after.singleShard).toBeGreaterThan(before.singleShard);
    expect(after.multiShard, 'multi-shard executions while the requests ran').toBe(0);
  });
});
