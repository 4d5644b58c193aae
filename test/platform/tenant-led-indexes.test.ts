/**
 * The schema's rule: every index of a tenant table (one with `organization_id` and `environment`) leads with those
 * two columns, so a tenant's lookups stay within its rows and, on Citus, within its shard. The indexes that do not
 * are listed here with the reason each exists; a new one fails this test until it is justified in the list (and in
 * docs/decisions/0058-citus-table-placement.md).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ role: 'api' });
});
afterAll(async () => {
  await t?.close();
});

const justified: Record<string, string> = {
  // Authentication finds a key by the hash presented, before it knows the tenant (a reference table on Citus).
  api_keys_key_hash_key: 'authentication',
  api_keys_pkey: 'key ids are global: the admin CLI revokes by id',
  // `/k` finds a kiosk code's tenant by the code's first group, before it knows the tenant (a reference table).
  kiosk_prefixes_pk: 'kiosk codes name their tenant by prefix',
  // The webhook dispatchers claim the oldest due deliveries of every tenant in one statement (per tenant measured
  // 8x slower, BENCHMARKS.md "Webhook delivery").
  webhook_deliveries_due: "the dispatchers' claim across tenants",
  // Retention sweeps of the maintenance jobs, which expire every tenant's old rows by age.
  events_by_age: 'events clean-up',
  exports_by_expiry: 'export file expiry',
  idempotency_keys_by_age: 'idempotency key expiry',
  response_deletions_by_age: 'deletion log expiry',
  audit_log_by_age: 'audit log expiry (a year)',
  // A GIN index of the records' attributes for targeting; GIN cannot lead with btree columns without btree_gin.
  respondents_attributes: 'attribute targeting (GIN)',
};

it('leads every index of a tenant table with (organization_id, environment), but for the justified ones', async () => {
  const { rows } = await sql<{ table: string; index: string }>`
    select c.relname as table, i.relname as index
    from pg_index x
    join pg_class i on i.oid = x.indexrelid
    join pg_class c on c.oid = x.indrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r'
      and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped)
      and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'environment' and not a.attisdropped)
      and (select array_agg(a.attname::text order by k.position)
           from unnest((x.indkey::int2[])[0:1]) with ordinality as k(attnum, position)
           join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum) is distinct from array['organization_id', 'environment']
    order by i.relname`.execute(t.db);
  // The check itself sees tenant tables (so an empty answer could not come from a query that matches nothing).
  const { rows: tenantTables } = await sql<{ n: number }>`
    select count(distinct table_name)::int as n from information_schema.columns
    where table_schema = 'public' and column_name = 'organization_id'`.execute(t.db);
  expect(tenantTables[0]!.n).toBeGreaterThan(15);
  expect(rows.map((row) => row.index).sort()).toEqual(Object.keys(justified).sort());
});
