/**
 * The daily counts' move into `analytics_segment_cells` (migration 2026-11-28T0100) keeps every count: the way
 * back restores `analytics_daily_cells` with the same sums, counts changed under that schema (a deletion) read the
 * same after the move, from the `#` rows, and the move again keeps them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../../server/src/db/migrate.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { generate } from './fixtures.js';

const before = '2026-11-26T0800_sync_estimate_index';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ role: 'api' });
});
afterAll(async () => {
  await t?.close();
});

interface DayCount {
  survey_id: string;
  day: string;
  code: number;
  n: string;
}

const fromDailyTable = () =>
  sql<DayCount>`
    select survey_id, day::text, code, sum(n)::text as n from analytics_daily_cells
    group by 1, 2, 3 having sum(n) <> 0 order by 1, 2, 3`.execute(t.db);

const fromWholeRows = () =>
  sql<DayCount>`
    select survey_id, day::text, u.code, sum(u.n)::text as n
    from analytics_segment_cells, unnest(codes, counts) as u(code, n)
    where field = '#'
    group by 1, 2, 3 having sum(u.n) <> 0 order by 1, 2, 3`.execute(t.db);

it('moves the daily counts into the # rows and back without changing a sum', { timeout: 120_000 }, async () => {
  const tenant = await t.createTenant('BUSINESS');
  const client = t.client(tenant.liveKey);
  // The service's code needs the latest schema: the responses go in through it first, and the schema before the
  // move is reached by the way back, whose daily table then takes a deletion by the old schema's own triggers.
  const generated = await generate(t, client, tenant.organizationId, 3);
  await migrateTo(t.db, before);
  // A deletion under the old schema: a −1 delta the move must net out.
  await t.db.deleteFrom('responses').where('id', '=', generated.responses[0]!.id).execute();
  const old = (await fromDailyTable()).rows;
  const responses = old.filter((row) => row.code === -1).reduce((sum, row) => sum + Number(row.n), 0);
  expect(responses).toBe(generated.responses.length - 1);

  await migrateToLatest(t.db);
  expect((await fromWholeRows()).rows).toEqual(old);
  const figures = await client.GET('/api/v1/surveys/{id}/analytics/static', {
    params: { path: { id: generated.surveyId } },
  });
  expect(figures.data?.data.responseCount).toBe(responses);

  await migrateTo(t.db, before);
  expect((await fromDailyTable()).rows).toEqual(old);
  expect((await fromWholeRows()).rows).toEqual([]);
  await migrateToLatest(t.db);
  expect((await fromWholeRows()).rows).toEqual(old);
});
