/**
 * A survey's response count sums its unfolded deltas through their index, also when one survey holds nearly every
 * delta (one survey collecting while the others rest, the common case) and the table's statistics say so: the
 * planner then estimated every survey at all the rows and scanned the whole table once per survey of a list page.
 * And the rows a fold deletes are swept, so that the index walk stays short between autovacuum visits.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hintShardStatistics, onCitus } from '../../server/src/db/citus.js';
import type { Tenant } from '../../server/src/db/tenant.js';
import { foldResponseCounts, sweepResponseCounts } from '../../server/src/modules/surveys/repository.js';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ role: 'api' });
});
afterAll(async () => {
  await t?.close();
});

it('reads each survey of a list page through the deltas index when one survey holds every delta', async () => {
  const tenant = await t.createTenant('BUSINESS');
  const client = t.client(tenant.liveKey);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const created = await client.POST('/api/v1/surveys', {
      body: { title: `Pulse ${i}`, questions: [{ type: 'nps', text: 'Recommend us?' }] },
    });
    ids.push(created.data!.data.id);
  }
  const busy = ids[0]!;
  await sql`
    insert into survey_response_counts (organization_id, environment, survey_id, n)
    select ${tenant.organizationId}, 'LIVE', ${busy}, 1 from generate_series(1, 5000)`.execute(t.db);
  await sql`analyze survey_response_counts`.execute(t.db);

  // The shape of the list's count: correlated with each survey row, so planned for any survey.
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`
    explain (format json)
    select s.id, (select sum(c.n) from survey_response_counts c
                  where c.organization_id = ${tenant.organizationId} and c.environment = 'LIVE' and c.survey_id = s.id)
    from surveys s where s.organization_id = ${tenant.organizationId} and s.environment = 'LIVE'`.execute(t.db);
  const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
  expect(plan).toContain('survey_response_counts_by_survey');
  expect(plan).not.toMatch(/"Node Type":"Seq Scan"[^}]*"Relation Name":"survey_response_counts"/);

  const listed = await client.GET('/api/v1/surveys', { params: { query: { pageSize: 20 } } });
  const counts = new Map(listed.data!.data.map((s) => [s.id, s.responseCount]));
  expect(counts.get(busy)).toBe(5000);
  expect(counts.get(ids[1]!)).toBe(0);
});

it('sweeps the rows a fold deletes, so a busy survey’s count stops walking them', async () => {
  const tenant = await t.createTenant('BUSINESS');
  const client = t.client(tenant.liveKey);
  const created = await client.POST('/api/v1/surveys', {
    body: { title: 'Busy', questions: [{ type: 'nps', text: 'Recommend us?' }] },
  });
  const id = created.data!.data.id;
  await sql`
    insert into survey_response_counts (organization_id, environment, survey_id, n)
    select ${tenant.organizationId}, 'LIVE', ${id}, 1 from generate_series(1, 20000)`.execute(t.db);
  const tenantValue: Tenant = { organizationId: tenant.organizationId, environment: 'LIVE' };
  expect(await foldResponseCounts(t.db, { tenant: tenantValue, surveyId: id })).toBe(20000);
  // The buffers one count lookup reads: every index entry of the survey, dead or alive, until a sweep.
  // (On Citus the shard's plan is inside the coordinator's, so the largest count in the plan is the lookup's.)
  const buffersRead = async () => {
    const { rows } = await sql<{ 'QUERY PLAN': unknown }>`
      explain (analyze, buffers, format json)
      select sum(n) from survey_response_counts
      where organization_id = ${tenant.organizationId} and environment = 'LIVE' and survey_id = ${id}`.execute(t.db);
    const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
    const counts = [...plan.matchAll(/"Shared (?:Hit|Read) Blocks":(\d+),"Shared (?:Hit|Read) Blocks":(\d+)/g)];
    return Math.max(...counts.map((m) => Number(m[1]) + Number(m[2])));
  };
  const before = await buffersRead();
  await sweepResponseCounts(t.db);
  const after = await buffersRead();
  // 20,000 entries fill about 100 index pages; swept, the lookup reads a few.
  expect(before).toBeGreaterThan(100);
  expect(after).toBeLessThan(before / 5);
  const read = await client.GET('/api/v1/surveys/{id}', { params: { path: { id } } });
  expect(read.data!.data.responseCount).toBe(20000);
});

it('declares survey ids distinct on the table, or on every shard on Citus, also after a shard lost it', async () => {
  const optionsOnShards = async () => {
    if (!(await onCitus(t.db))) {
      const { rows } = await sql<{ options: string[] | null }>`
        select attoptions as options from pg_attribute
        where attrelid = 'survey_response_counts'::regclass and attname = 'survey_id'`.execute(t.db);
      return [(rows[0]?.options ?? []).join(',')];
    }
    const { rows } = await sql<{ result: string }>`
      select result from run_command_on_shards('survey_response_counts',
        $$select coalesce(array_to_string(attoptions, ','), '') from pg_attribute
          where attrelid = '%s'::regclass and attname = 'survey_id'$$)`.execute(t.db);
    return rows.map((row) => row.result);
  };
  const hinted = await optionsOnShards();
  expect(hinted.length).toBeGreaterThan(0);
  expect(hinted.every((options) => options.split(',').includes('n_distinct=-1'))).toBe(true);
  if (!(await onCitus(t.db))) return;
  // A shard made by a split has no column options (Citus does not carry them): the hint puts them back.
  const { rows: reset } = await sql<{
    success: boolean;
    result: string;
  }>`select success, result from run_command_on_shards('survey_response_counts',
    'alter table %s alter column survey_id reset (n_distinct)')`.execute(t.db);
  expect(reset.filter((row) => !row.success)).toEqual([]);
  // (Citus keeps options of its own there, such as pg_attver.)
  expect((await optionsOnShards()).some((options) => options.split(',').includes('n_distinct=-1'))).toBe(false);
  await hintShardStatistics(t.db);
  expect((await optionsOnShards()).every((options) => options.split(',').includes('n_distinct=-1'))).toBe(true);
});
