/**
 * On Citus (`CITUS=1`), one worker node restarts while requests run: the tenant whose shards are on the other worker
 * keeps being read and keeps submitting (a submission is one call delegated to its tenant's node, and no other node
 * takes part), the tenant on the restarting node gets 503 `unavailable` (never a 500) and is served again within
 * 5 s of its node accepting connections; every acknowledged submission is stored once. On a private
 * three-node cluster (its own directory and ports, made by the run's cluster script), never the run's shared one,
 * whose other test files would meet the restart.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../server/src/db/database.js';
import { insertKey } from '../../server/src/modules/api-keys/repository.js';
import { insertOrganization } from '../../server/src/modules/organizations/repository.js';
import { eventually } from '../helpers/eventually.js';
import { freePortBelowEphemeral } from '../helpers/ports.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { citusMode, clusterScript } from './cluster.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let directory: string;
let port: number;
let service: ServiceProcess | undefined;
let database: DatabaseHandle | undefined;

/** The private cluster's script: the run's, pointed at its own directory and ports. */
async function cluster(...args: string[]): Promise<string> {
  const { stdout } = await run('bash', [clusterScript(), ...args], {
    env: { ...process.env, CITUS_DIR: directory, CITUS_PORT: String(port) },
  });
  return stdout.trim();
}

interface Tenant {
  organizationId: string;
  key: string;
  surveyId: string;
  workerPort: number;
  statuses: Map<string, number>;
  acknowledged: string[];
}

async function tenantOnAWorker(): Promise<Omit<Tenant, 'surveyId'>> {
  const { id } = await insertOrganization(database!.db, { name: 'Worker restart', plan: 'BUSINESS' });
  await database!.pool.query(
    'update organizations set rate_limit_per_minute = 1000000, rate_limit_per_day = 100000000 where id = $1',
    [id],
  );
  const { key } = await insertKey(database!.db, {
    organizationId: id,
    environment: 'LIVE',
    name: 'worker restart',
    scopes: ['*'],
    expiresAt: null,
  });
  const { rows } = await database!.pool.query<{ nodeport: number }>(
    `select nodeport from pg_dist_shard_placement
     where shardid = get_shard_id_for_distribution_column('surveys', $1::text)`,
    [id],
  );
  return { organizationId: id, key, workerPort: rows[0]!.nodeport, statuses: new Map(), acknowledged: [] };
}

beforeAll(async () => {
  if (!citusMode) return;
  directory = `/var/tmp/citus-worker-restart-${process.pid}`;
  // The coordinator's; the workers take the next two (free as well, in all likelihood, below the ephemeral range).
  port = await freePortBelowEphemeral();
  await cluster('up');
  await cluster('createdb', 'outage');
  const url = await cluster('url', 'outage');
  service = await startServiceProcess({ databaseUrl: url, env: { DATABASE_RECONNECT_MAX_DELAY_MS: '1000' } });
  database = openDatabase(url, 2);
}, 300_000);

afterAll(async () => {
  if (!citusMode) return;
  await service?.stop();
  await database?.close();
  await cluster('destroy').catch(() => undefined);
  await rm(directory, { recursive: true, force: true });
});

describe.skipIf(!citusMode)('a Citus worker node restarting', () => {
  it("serves the other worker's tenant, reads and submissions, answers the affected one 503 (never 500), and recovers within 5 s", async () => {
    // A tenant on each worker.
    const byWorker = new Map<number, Omit<Tenant, 'surveyId'>>();
    while (byWorker.size < 2) {
      const tenant = await tenantOnAWorker();
      if (!byWorker.has(tenant.workerPort)) byWorker.set(tenant.workerPort, tenant);
    }
    const tenants: Tenant[] = [];
    for (const tenant of byWorker.values()) {
      const headers = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' };
      const created = await fetch(`${service!.url}/api/v1/surveys`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: 'Restart', questions: [{ type: 'nps', text: 'Recommend us?' }] }),
      });
      const surveyId = ((await created.json()) as { data: { id: string } }).data.id;
      expect(
        (await fetch(`${service!.url}/api/v1/surveys/${surveyId}/launch`, { method: 'POST', headers })).status,
      ).toBe(200);
      tenants.push({ ...tenant, surveyId });
    }
    const [affected, other] = tenants as [Tenant, Tenant];

    let stopped = false;
    let phase: 'before' | 'restarting' | 'after' = 'before';
    const problems: string[] = [];
    const load = async (tenant: Tenant) => {
      while (!stopped) {
        const key = crypto.randomUUID();
        for (;;) {
          const started = Date.now();
          const response = await fetch(`${service!.url}/api/v1/surveys/${tenant.surveyId}/responses`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${tenant.key}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: JSON.stringify({ answers: [{ questionId: 'q_1', value: 8 }] }),
            signal: AbortSignal.timeout(15_000),
          });
          const status = `${phase} ${response.status}`;
          tenant.statuses.set(status, (tenant.statuses.get(status) ?? 0) + 1);
          if (Date.now() - started > 10_000) problems.push(`a submission took ${Date.now() - started} ms`);
          if (response.status === 201) {
            tenant.acknowledged.push(((await response.json()) as { data: { id: string } }).data.id);
            break;
          }
          const body = (await response.json()) as { error: { code: string } };
          if (response.status === 503 && (!response.headers.get('retry-after') || body.error.code !== 'unavailable'))
            problems.push('503 without Retry-After or unavailable');
          if (response.status !== 503 && !(response.status === 409 && body.error.code === 'idempotency_in_progress'))
            problems.push(`${response.status} ${body.error.code}`);
          // A careful client's pause before it retries (the load's pace, not a wait for anything).
          await sleep(50);
        }
      }
    };
    // Reads of each tenant's survey, by tenant, phase and status.
    const reads = new Map<string, number>();
    const read = async (tenant: Tenant) => {
      while (!stopped) {
        const response = await fetch(`${service!.url}/api/v1/surveys/${tenant.surveyId}`, {
          headers: { authorization: `Bearer ${tenant.key}` },
        });
        await response.arrayBuffer();
        const status = `${tenant === other ? 'other' : 'affected'} ${phase} ${response.status}`;
        reads.set(status, (reads.get(status) ?? 0) + 1);
        // The readers' pace, not a wait for anything.
        await sleep(20);
      }
    };
    const loops = [load(affected), load(affected), load(other), load(other), read(affected), read(other)];
    // A second of traffic before the restart (the scenario, not a wait for anything).
    await sleep(1_000);
    phase = 'restarting';
    // A restart with a window long enough to be seen: a fast shutdown, a second and a half, a start.
    await cluster('node', String(affected.workerPort), 'stop');
    await sleep(1_500);
    await cluster('node', String(affected.workerPort), 'start');
    const upAt = Date.now();
    phase = 'after';
    // Served again: a new submission of the affected tenant is acknowledged within 5 s of its node's start.
    const before = affected.acknowledged.length;
    await eventually(
      () => affected.acknowledged.length > before,
      30_000,
      'a submission of the affected tenant acknowledged',
      20,
    );
    const recoveredInMs = Date.now() - upAt;
    // The traffic goes on after the recovery, on the restarted node and the other, before anything is asserted:
    // 20 more submissions of each tenant acknowledged and 10 more reads of each answered.
    const counts = () => [
      affected.acknowledged.length,
      other.acknowledged.length,
      reads.get('affected after 200') ?? 0,
      reads.get('other after 200') ?? 0,
    ];
    const atRecovery = counts();
    await eventually(
      () => counts().every((n, i) => n >= atRecovery[i]! + (i < 2 ? 20 : 10)),
      30_000,
      'traffic after the recovery',
    );
    stopped = true;
    await Promise.all(loops);

    expect(problems).toEqual([]);
    expect(recoveredInMs).toBeLessThan(5_000);
    expect(service!.child.exitCode).toBeNull();
    // The affected tenant got 503s (never a 500); the other worker's tenant was read and stored all along.
    expect(affected.statuses.get('restarting 503') ?? 0).toBeGreaterThan(0);
    expect(reads.get('affected restarting 503') ?? 0).toBeGreaterThan(0);
    expect(reads.get('other restarting 200') ?? 0).toBeGreaterThan(0);
    expect([...reads.keys()].filter((key) => key.startsWith('other') && !key.endsWith(' 200'))).toEqual([]);
    expect(other.statuses.get('restarting 201') ?? 0).toBeGreaterThan(0);
    expect([...other.statuses.keys()].filter((key) => !key.endsWith(' 201'))).toEqual([]);

    for (const tenant of tenants) {
      const { rows } = await database!.pool.query<{ id: string }>(
        'select id from responses where organization_id = $1 and survey_id = $2',
        [tenant.organizationId, tenant.surveyId],
      );
      expect(rows.map((row) => row.id).sort()).toEqual([...tenant.acknowledged].sort());
    }
  }, 180_000);
});
