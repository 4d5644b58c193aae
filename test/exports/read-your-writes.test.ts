/**
 * Read-your-writes for exports: every response acknowledged (201) before an export was requested is in it, and a
 * chain of increments (`sinceExport`) holds each response exactly once and lists each deletion exactly once —
 * with transactions of this tenant and of another tenant still open across the exports. The chain is defined by
 * PostgreSQL snapshots, not by clocks: no export waits for (or loses rows to) a transaction in progress.
 */
import { citusMode } from '../citus/cluster.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { scopeOf, scopeRowsQuery } from '../../server/src/modules/exports/repository.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { activeSurvey, answersFor, bulkInsert, exportToBuffer, tenant, type ExportRequest } from './fixtures.js';

let t: TestService;
let owner: Awaited<ReturnType<typeof tenant>>;
let other: Awaited<ReturnType<typeof tenant>>;
const rawClients: pg.Client[] = [];

beforeAll(async () => {
  // The default configuration: what a deployment runs.
  t = await startTestService();
  owner = await tenant(t);
  other = await tenant(t);
});
afterAll(async () => {
  for (const client of rawClients) await client.end().catch(() => undefined);
  await t?.close();
});

type Client = typeof owner.live;

async function submitMany(client: Client, surveyId: string, count: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  // Ten at a time, each acknowledged (201) before the function returns.
  for (let start = from; start < from + count; start += 10) {
    const batch = [];
    for (let i = start; i < Math.min(start + 10, from + count); i++) {
      batch.push(
        client.unwrap(
          client.POST('/api/v1/surveys/{id}/responses', {
            params: { path: { id: surveyId } },
            body: { respondentExternalId: `E-${i}`, answers: answersFor(i) },
          }),
        ),
      );
    }
    ids.push(...(await Promise.all(batch)).map((r) => r.id));
  }
  return ids;
}

async function exportIds(client: Client, surveyId: string, request: Omit<ExportRequest, 'format'> = {}) {
  const started = Date.now();
  const result = await exportToBuffer(client, surveyId, { ...request, format: 'ndjson' });
  const ids = result.bytes
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);
  expect(ids.length).toBe(result.export.rowCount);
  return { ids, export: result.export, ms: Date.now() - started };
}

async function deletionsOf(client: Client, exportId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const d of client.paginate('/api/v1/exports/{exportId}/deletions', {
    params: { path: { exportId }, query: { pageSize: 100 } },
  }))
    out.push(d.responseId);
  return out;
}

const remove = (client: Client, surveyId: string, id: string) =>
  client.unwrap(
    client.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: surveyId, responseId: id } },
    }),
  );

/** A connection of its own (not the service's pool), for a transaction the test keeps open. */
async function rawClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.database.url });
  await client.connect();
  rawClients.push(client);
  return client;
}

/** A response inserted as the API's submission does it (same columns; the defaults fill the rest), in `client`'s
 * transaction. */
async function insertResponse(
  client: pg.Client,
  who: { organizationId: string },
  surveyId: string,
  id: string,
  i: number,
) {
  await client.query(
    `insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at)
     values ($1, $2, $3, 'LIVE', null, null, $4::jsonb, $5)`,
    [id, surveyId, who.organizationId, JSON.stringify(answersFor(i)), new Date()],
  );
}

const sorted = (ids: readonly string[]) => [...ids].sort();

describe('read your writes', () => {
  it(
    'a full export requested right after 150 submissions holds all 150, and an increment right after holds none',
    { timeout: 120_000 },
    async () => {
      const survey = await activeSurvey(owner.live);
      const submitted = await submitMany(owner.live, survey.id, 150);
      const full = await exportIds(owner.live, survey.id);
      expect(full.ids.length).toBe(150);
      expect(sorted(full.ids)).toEqual(sorted(submitted));

      const nothing = await exportIds(owner.live, survey.id, { sinceExport: full.export.id });
      expect(nothing.ids).toEqual([]);
      expect(await deletionsOf(owner.live, nothing.export.id)).toEqual([]);
    },
  );
});

describe('a chain of increments', () => {
  it(
    'holds each response once and lists each deletion once, with another tenant’s transaction open throughout',
    { timeout: 120_000 },
    async () => {
      const survey = await activeSurvey(owner.live);
      const otherSurvey = await activeSurvey(other.live);
      const a = await submitMany(owner.live, survey.id, 20);
      await remove(owner.live, survey.id, a[0]!);

      // Another tenant's transaction, holding an xid (it wrote a response), open across every export below.
      const long = await rawClient();
      await long.query('begin');
      await insertResponse(long, other, otherSurvey.id, 'rsp_000000000000000000000L0NG1', 1);

      const full = await exportIds(owner.live, survey.id);
      expect(full.ms).toBeLessThan(15_000);
      expect(sorted(full.ids)).toEqual(sorted(a.slice(1)));
      expect(await deletionsOf(owner.live, full.export.id)).toEqual([a[0]]);

      const b = await submitMany(owner.live, survey.id, 10, 100);
      await remove(owner.live, survey.id, a[1]!);
      await remove(owner.live, survey.id, b[0]!);
      const first = await exportIds(owner.live, survey.id, { sinceExport: full.export.id });
      expect(first.ms).toBeLessThan(15_000);
      expect(sorted(first.ids)).toEqual(sorted(b.slice(1)));
      expect(sorted(await deletionsOf(owner.live, first.export.id))).toEqual(sorted([a[1]!, b[0]!]));

      const c = await submitMany(owner.live, survey.id, 5, 200);
      await remove(owner.live, survey.id, b[1]!);
      const second = await exportIds(owner.live, survey.id, { sinceExport: first.export.id });
      expect(second.ms).toBeLessThan(15_000);
      expect(sorted(second.ids)).toEqual(sorted(c));
      expect(await deletionsOf(owner.live, second.export.id)).toEqual([b[1]]);

      await long.query('commit');

      // The other tenant's exports see its long transaction's response once it committed, and only then.
      const otherFull = await exportIds(other.live, otherSurvey.id);
      expect(otherFull.ids).toEqual(['rsp_000000000000000000000L0NG1']);

      // Across the chain: every response received once; every deletion listed once.
      const received = [...full.ids, ...first.ids, ...second.ids];
      expect(received.length).toBe(new Set(received).size);
      const deleted = [a[0]!, a[1]!, b[0]!, b[1]!];
      const listed = [
        ...(await deletionsOf(owner.live, full.export.id)),
        ...(await deletionsOf(owner.live, first.export.id)),
        ...(await deletionsOf(owner.live, second.export.id)),
      ];
      expect(sorted(listed)).toEqual(sorted(deleted));
      // What a loader holds after applying files and deletions in order: exactly the responses that exist.
      const stored = [...a, ...b, ...c].filter((id) => !deleted.includes(id));
      const held = new Set<string>();
      for (const step of [
        { ids: full.ids, deletions: await deletionsOf(owner.live, full.export.id) },
        { ids: first.ids, deletions: await deletionsOf(owner.live, first.export.id) },
        { ids: second.ids, deletions: await deletionsOf(owner.live, second.export.id) },
      ]) {
        for (const id of step.ids) held.add(id);
        for (const id of step.deletions) held.delete(id);
      }
      expect(sorted([...held])).toEqual(sorted(stored));

      const third = await exportIds(owner.live, survey.id, { sinceExport: second.export.id });
      expect(third.ids).toEqual([]);
      expect(await deletionsOf(owner.live, third.export.id)).toEqual([]);
    },
  );

  it(
    'puts a response and a deletion of this tenant that commit after an export’s snapshot into the next increment',
    { timeout: 120_000 },
    async () => {
      const survey = await activeSurvey(owner.live);
      const before = await submitMany(owner.live, survey.id, 5);

      // In flight: a submission and a deletion of this survey, begun before the export, committed after it.
      const inFlight = await rawClient();
      await inFlight.query('begin');
      await insertResponse(inFlight, owner, survey.id, 'rsp_00000000000000000000FL1GHT', 7);
      await inFlight.query('delete from responses where id = $1', [before[0]]);
      // Acknowledged after the in-flight transaction began.
      const after = await submitMany(owner.live, survey.id, 5, 50);

      const full = await exportIds(owner.live, survey.id);
      expect(full.ms).toBeLessThan(15_000);
      // Everything acknowledged, the in-flight response not (not committed), the row it is deleting still there.
      expect(sorted(full.ids)).toEqual(sorted([...before, ...after]));
      expect(await deletionsOf(owner.live, full.export.id)).toEqual([]);

      await inFlight.query('commit');

      const next = await exportIds(owner.live, survey.id, { sinceExport: full.export.id });
      expect(next.ids).toEqual(['rsp_00000000000000000000FL1GHT']);
      expect(await deletionsOf(owner.live, next.export.id)).toEqual([before[0]]);

      const last = await exportIds(owner.live, survey.id, { sinceExport: next.export.id });
      expect(last.ids).toEqual([]);
      expect(await deletionsOf(owner.live, last.export.id)).toEqual([]);
    },
  );
});

describe('windows in a chain', () => {
  it(
    'continues a chain whose first export ended at submittedBefore, with what committed late before that end',
    { timeout: 60_000 },
    async () => {
      const survey = await activeSurvey(owner.live);
      const early = await submitMany(owner.live, survey.id, 3);
      // A submission begun before the cut, committed after the first export's snapshot.
      const late = await rawClient();
      await late.query('begin');
      await insertResponse(late, owner, survey.id, 'rsp_0000000000000000000000LATE', 3);
      // The cut lies apart on the clock from what comes before and after it (the point, not a wait for anything).
      await new Promise((resolve) => setTimeout(resolve, 20));
      const cut = new Date();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const afterCut = await submitMany(owner.live, survey.id, 2, 10);

      const first = await exportIds(owner.live, survey.id, { submittedBefore: cut.toISOString() });
      expect(sorted(first.ids)).toEqual(sorted(early));
      expect(first.export.watermark).toBe(cut.toISOString());
      await late.query('commit');

      // Ending earlier than the previous export would break the chain; so would an end after an open-ended one.
      const earlier = await owner.live.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: survey.id } },
        body: {
          format: 'ndjson',
          sinceExport: first.export.id,
          submittedBefore: new Date(cut.getTime() - 1).toISOString(),
        },
      });
      expect(earlier.response.status).toBe(400);

      const second = await exportIds(owner.live, survey.id, { sinceExport: first.export.id });
      expect(sorted(second.ids)).toEqual(sorted([...afterCut, 'rsp_0000000000000000000000LATE']));
      const third = await exportIds(owner.live, survey.id, { sinceExport: second.export.id });
      expect(third.ids).toEqual([]);
      const bounded = await owner.live.POST('/api/v1/surveys/{id}/responses/export', {
        params: { path: { id: survey.id } },
        body: {
          format: 'ndjson',
          sinceExport: third.export.id,
          submittedBefore: new Date(Date.now() + 60_000).toISOString(),
        },
      });
      expect(bounded.response.status).toBe(400);
      expect(bounded.error?.error.details?.[0]?.path).toBe('/body/submittedBefore');
    },
  );

  it('continues an export accepted before snapshots from its watermark', async () => {
    const survey = await activeSurvey(owner.live);
    const old = await submitMany(owner.live, survey.id, 2);
    const first = await exportIds(owner.live, survey.id);
    expect(sorted(first.ids)).toEqual(sorted(old));
    // What an export completed before the migration looks like: a watermark, no snapshot.
    await t.db.updateTable('exports').set({ snapshot_at: null }).where('id', '=', first.export.id).execute();
    await sql`update exports set snapshot = null where id = ${first.export.id}`.execute(t.db);
    const fresh = await submitMany(owner.live, survey.id, 2, 10);
    const next = await exportIds(owner.live, survey.id, { sinceExport: first.export.id });
    expect(next.export.submittedAfter).toBe(first.export.watermark);
    expect(sorted(next.ids)).toEqual(sorted(fresh));
    const after = await exportIds(owner.live, survey.id, { sinceExport: next.export.id });
    expect(after.ids).toEqual([]);
  });
});

describe('an increment over a big survey', () => {
  it('reads its range of the tenant-led xact_id index, not the survey', { timeout: 120_000 }, async () => {
    const survey = await activeSurvey(owner.live);
    await bulkInsert(t, owner.organizationId, survey.id, 30_000);
    const full = await exportIds(owner.live, survey.id);
    expect(full.ids.length).toBe(30_000);
    const fresh = await submitMany(owner.live, survey.id, 5);
    await sql`analyze responses`.execute(t.db);
    const next = await exportIds(owner.live, survey.id, { sinceExport: full.export.id });
    expect(sorted(next.ids)).toEqual(sorted(fresh));

    const tenantOf = { organizationId: owner.organizationId, environment: 'LIVE' as const };
    // The plan of an export's cursor (a cursor plans for its first rows).
    const planOf = async (exportId: string) => {
      const row = await t.db.selectFrom('exports').selectAll().where('id', '=', exportId).executeTakeFirstOrThrow();
      return t.db.transaction().execute(async (tx) => {
        const { rows } = await sql<{
          'QUERY PLAN': string;
        }>`explain declare c no scroll cursor for ${scopeRowsQuery(tenantOf, scopeOf(row))}`.execute(tx);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    };
    const increment = await planOf(next.export.id);
    expect(increment).toContain('responses_by_xact');
    expect(increment).toMatch(/Index Cond: .*xact_id >= .*xact_id < /s);
    expect(increment).not.toContain('Seq Scan');
    expect(increment).not.toContain('responses_by_survey');
    // A full export streams the survey in index order: no sort of the whole survey. On Citus the shard's node plans
    // the cursor's query for all its rows (the coordinator fetches them whole), so a scan and a sort can win there.
    const whole = await planOf(full.export.id);
    if (!citusMode) {
      expect(whole).toContain('Index Scan Backward using responses_by_survey');
      expect(whole).not.toContain('Sort');
    } else {
      expect(whole).toContain('Task Count: 1');
    }
  });
});
