/**
 * On Citus, one tenant's requests stay on that tenant's shard: a broad sample of API operations for one
 * organization, through the SDK, runs no multi-shard query on any node. Skipped unless `CITUS=1`
 * (test/citus/cluster.ts).
 *
 * Citus counts, per node and per database, the distributed queries it executes (`citus_stat_counters`, on while
 * `citus.enable_stat_counters` is): `query_execution_single_shard` for a plan of one task, which runs on one
 * shard (or on the one placement set of a reference table), `query_execution_multi_shard` for a plan of several.
 * A statement that a trigger runs on a worker's shard is planned, and counted, on that worker: the counters are
 * summed over every node. Only the API runs here (`role: 'api'`): no job worker and no webhook dispatcher, whose
 * queries are not a request's. The database logs each multi-shard plan with its statement
 * (`CITUS_LOG_MULTI_SHARD`), so a failure names the statements in /var/tmp/citus-cluster/node*.log.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';
import { citusMode } from './cluster.js';

interface Counters {
  singleShard: number;
  multiShard: number;
}

/** This database's counters, summed over the coordinator and the workers. */
async function counters(admin: pg.Client): Promise<Counters & { nodes: string[] }> {
  const { rows } = await admin.query<{ result: string; success: boolean; nodeid: number }>(
    `select nodeid, success, result from run_command_on_all_nodes($$
       select query_execution_single_shard || ',' || query_execution_multi_shard
       from citus_stat_counters where name = current_database()$$)`,
  );
  const total = { singleShard: 0, multiShard: 0, nodes: [] as string[] };
  for (const row of rows) {
    if (!row.success) throw new Error(`citus_stat_counters on node ${row.nodeid}: ${row.result}`);
    const [single, multi] = row.result.split(',').map(Number);
    total.singleShard += single!;
    total.multiShard += multi!;
    total.nodes.push(`node ${row.nodeid}: ${single} single-shard, ${multi} multi-shard`);
  }
  return total;
}

async function resetCounters(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ result: string; success: boolean; nodeid: number }>(
    `select nodeid, success, result from run_command_on_all_nodes($$select citus_stat_counters_reset()$$)`,
  );
  for (const row of rows) if (!row.success) throw new Error(`reset on node ${row.nodeid}: ${row.result}`);
}

describe.skipIf(!citusMode)('one tenant on Citus', () => {
  let t: TestService;
  let admin: pg.Client;
  beforeAll(async () => {
    vi.stubEnv('CITUS_LOG_MULTI_SHARD', '1');
    t = await startTestService({ role: 'api' });
    admin = new pg.Client({ connectionString: t.database.url });
    await admin.connect();
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await admin?.end();
    await t?.close();
  });

  it('runs every request of a broad sample on one shard', async () => {
    const { live } = await tenantWithRaisedLimits(t);
    // A second tenant with rows of its own: a fan-out would have other shards to visit.
    const other = await tenantWithRaisedLimits(t);
    await other.live.unwrap(other.live.POST('/api/v1/surveys', { body: surveyBody() }));

    await resetCounters(admin);
    const before = await counters(admin);
    expect(before.multiShard).toBe(0);

    const statuses: Record<string, number> = {};
    const call = async <T extends { response: Response }>(name: string, request: Promise<T>): Promise<T> => {
      const result = await request;
      statuses[name] = result.response.status;
      return result;
    };
    const id = (surveyId: string) => ({ params: { path: { id: surveyId } } });

    const created = await call('create survey', live.POST('/api/v1/surveys', { body: surveyBody() }));
    const surveyId = created.data!.data.id;
    await call('list surveys', live.GET('/api/v1/surveys', {}));
    await call('get survey', live.GET('/api/v1/surveys/{id}', id(surveyId)));
    await call('update survey', live.PATCH('/api/v1/surveys/{id}', { ...id(surveyId), body: { title: 'Renamed' } }));
    await call('launch survey', live.POST('/api/v1/surveys/{id}/launch', id(surveyId)));
    const submitted = await call(
      'submit response',
      live.POST('/api/v1/surveys/{id}/responses', {
        ...id(surveyId),
        body: { answers: validAnswers, respondentExternalId: 'E-1' },
      }),
    );
    await call(
      'submit second response',
      live.POST('/api/v1/surveys/{id}/responses', { ...id(surveyId), body: { answers: validAnswers } }),
    );
    await call('list responses', live.GET('/api/v1/surveys/{id}/responses', id(surveyId)));
    const responseId = submitted.data?.data.id ?? 'rsp_01JD3MC6N2V8H4XJ9P5R7T1Q0D';
    await call(
      'get response',
      live.GET('/api/v1/surveys/{id}/responses/{responseId}', { params: { path: { id: surveyId, responseId } } }),
    );
    await call(
      'upsert respondent',
      live.PUT('/api/v1/respondents/{externalId}', {
        params: { path: { externalId: 'E-1' } },
        body: { email: 'ada@example.com', firstName: 'Ada', department: 'Engineering' },
      }),
    );
    await call('list respondents', live.GET('/api/v1/respondents', {}));
    await call(
      'create webhook',
      live.POST('/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/survey-hook', events: ['*'] } }),
    );
    await call('list webhooks', live.GET('/api/v1/webhooks', {}));
    await call('list events', live.GET('/api/v1/events', {}));
    await call(
      'preview distribution',
      live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [{ field: 'department', operator: 'equals', value: 'Engineering' }] } },
      }),
    );
    await call(
      'list distributions',
      live.GET('/api/v1/surveys/{surveyId}/distributions', { params: { path: { surveyId } } }),
    );
    const exported = await call(
      'create export',
      live.POST('/api/v1/surveys/{id}/responses/export', { ...id(surveyId), body: { format: 'csv' } }),
    );
    if (exported.data) {
      await call(
        'get export',
        live.GET('/api/v1/exports/{exportId}', { params: { path: { exportId: exported.data.data.id } } }),
      );
    }
    await call('static analytics', live.GET('/api/v1/surveys/{id}/analytics/static', id(surveyId)));
    await call('me', live.GET('/api/v1/me'));

    const after = await counters(admin);
    const summary = JSON.stringify({ statuses, counters: after.nodes }, null, 2);
    // The sample worked: every request succeeded (a failed one proves nothing about where it ran).
    for (const [name, status] of Object.entries(statuses)) expect(status, `${name}\n${summary}`).toBeLessThan(300);
    expect(after.singleShard, summary).toBeGreaterThan(before.singleShard);
    expect(after.multiShard, `multi-shard queries (see LOG: multi-task query in node*.log)\n${summary}`).toBe(0);
  });
});
