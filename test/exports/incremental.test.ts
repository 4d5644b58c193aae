/**
 * Windows and incremental exports: inclusive and exclusive edges, a chain of exports started from each
 * other (`sinceExport`) that delivers every response exactly once — with a transaction committing across an
 * export and with submissions arriving throughout — and the deletions list. See also read-your-writes.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { activeSurvey, answersFor, exportToBuffer, tenant } from './fixtures.js';

let t: TestService;
let owner: Awaited<ReturnType<typeof tenant>>;

beforeAll(async () => {
  t = await startTestService();
  owner = await tenant(t);
});
afterAll(async () => {
  await t?.close();
});

async function idsOf(surveyId: string, request: Parameters<typeof exportToBuffer>[2]) {
  const result = await exportToBuffer(owner.live, surveyId, { ...request, format: 'ndjson' });
  const ids = result.bytes
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);
  expect(ids.length).toBe(result.export.rowCount);
  return { ids, export: result.export };
}

const insertAt = (surveyId: string, id: string, at: string) =>
  sql`insert into responses (id, survey_id, organization_id, environment, answers, submitted_at)
      values (${id}, ${surveyId}, ${owner.organizationId}, 'LIVE', ${JSON.stringify(answersFor(1))}, ${at}::timestamptz)`.execute(
    t.db,
  );

describe('the window', () => {
  it('includes submittedAfter and excludes submittedBefore, to the millisecond', async () => {
    const survey = await activeSurvey(owner.live);
    await insertAt(survey.id, 'rsp_00000000000000000000000001', '2026-03-01T11:59:59.999Z');
    await insertAt(survey.id, 'rsp_00000000000000000000000002', '2026-03-01T12:00:00.000Z');
    await insertAt(survey.id, 'rsp_00000000000000000000000003', '2026-03-01T12:00:00.001Z');
    await insertAt(survey.id, 'rsp_00000000000000000000000004', '2026-03-01T12:00:00.002Z');
    const { ids, export: done } = await idsOf(survey.id, {
      format: 'ndjson',
      submittedAfter: '2026-03-01T12:00:00.000Z',
      submittedBefore: '2026-03-01T12:00:00.002Z',
    });
    expect(ids).toEqual(['rsp_00000000000000000000000002', 'rsp_00000000000000000000000003']);
    // A window that ends in the past ends there: the watermark is submittedBefore.
    expect(done.watermark).toBe('2026-03-01T12:00:00.002Z');
    expect(done.submittedAfter).toBe('2026-03-01T12:00:00.000Z');
    // Ties on submittedAt are ordered by id, and none is lost at a page edge.
    const all = await idsOf(survey.id, { format: 'ndjson' });
    expect(all.ids).toEqual([
      'rsp_00000000000000000000000001',
      'rsp_00000000000000000000000002',
      'rsp_00000000000000000000000003',
      'rsp_00000000000000000000000004',
    ]);
  });
});

describe('a chain of exports', () => {
  it('delivers a response whose transaction commits during an export to the next export, not never', async () => {
    const survey = await activeSurvey(owner.live);
    await owner.live.unwrap(
      owner.live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: survey.id } },
        body: { answers: answersFor(2) },
      }),
    );
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    // A submission that has begun (its submittedAt is taken) but not committed yet, as submitResponse does it.
    const slow = t.db.transaction().execute(async (trx) => {
      await sql`insert into responses (id, survey_id, organization_id, environment, answers, submitted_at)
        values ('rsp_00000000000000000000000SL0W', ${survey.id}, ${owner.organizationId}, 'LIVE', ${JSON.stringify(answersFor(3))}, ${new Date()})`.execute(
        trx,
      );
      inserted();
      await released;
    });
    await insertedSignal;
    // Apart on the clock (the point, not a wait for anything): the later response's submittedAt is after this one's.
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A response committed after the slow one began, before the export.
    const later = await owner.live.unwrap(
      owner.live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: survey.id } },
        body: { answers: answersFor(4) },
      }),
    );
    const first = await idsOf(survey.id, { format: 'ndjson' });
    release();
    await slow;
    expect(first.ids).not.toContain('rsp_00000000000000000000000SL0W');
    // The open transaction holds back only its own row: the later response was acknowledged, so it is exported.
    expect(first.ids).toContain(later.id);
    expect(first.ids).toHaveLength(2);
    const second = await idsOf(survey.id, { format: 'ndjson', sinceExport: first.export.id });
    // The chain keeps its start (none); the snapshots, not a time, separate the two exports.
    expect(second.export.submittedAfter).toBeNull();
    expect(second.ids).toEqual(['rsp_00000000000000000000000SL0W']);
  });

  it('gives every response exactly once while submissions keep arriving', { timeout: 60_000 }, async () => {
    const survey = await activeSurvey(owner.live);
    let stop = false;
    const submitted: string[] = [];
    const submitters = Array.from({ length: 3 }, async () => {
      for (let i = 0; !stop; i++) {
        const r = await owner.live.unwrap(
          owner.live.POST('/api/v1/surveys/{id}/responses', {
            params: { path: { id: survey.id } },
            body: { answers: answersFor(i) },
          }),
        );
        submitted.push(r.id);
      }
    });
    const received: string[] = [];
    let previous: string | undefined;
    for (let run = 0; run < 4; run++) {
      // Submissions arrive between two exports: at least 6 more acknowledged (over 20 in all, as asserted below).
      const before = submitted.length;
      await eventually(() => submitted.length >= before + 6, 15_000, 'submissions between two exports');
      const { ids, export: done } = await idsOf(
        survey.id,
        previous ? { format: 'ndjson', sinceExport: previous } : { format: 'ndjson' },
      );
      received.push(...ids);
      previous = done.id;
    }
    stop = true;
    await Promise.all(submitters);
    const last = await idsOf(survey.id, { format: 'ndjson', sinceExport: previous });
    received.push(...last.ids);
    expect(submitted.length).toBeGreaterThan(20);
    expect(received.length).toBe(new Set(received).size);
    expect(received.sort()).toEqual(submitted.sort());
  });
});

describe('deletions', () => {
  it('are not in later files and are listed by exactly one export of the chain', async () => {
    const survey = await activeSurvey(owner.live);
    const submitted = [];
    for (let i = 0; i < 5; i++) {
      submitted.push(
        await owner.live.unwrap(
          owner.live.POST('/api/v1/surveys/{id}/responses', {
            params: { path: { id: survey.id } },
            body: { answers: answersFor(i) },
          }),
        ),
      );
    }
    const remove = (id: string) =>
      owner.live.unwrap(
        owner.live.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
          params: { path: { id: survey.id, responseId: id } },
        }),
      );
    await remove(submitted[0]!.id);
    const first = await idsOf(survey.id, { format: 'ndjson' });
    expect(first.ids.sort()).toEqual(
      submitted
        .slice(1)
        .map((r) => r.id)
        .sort(),
    );
    const deletionsOf = async (exportId: string) =>
      (
        await owner.live.unwrap(
          owner.live.GET('/api/v1/exports/{exportId}/deletions', { params: { path: { exportId } } }),
        )
      ).map((d) => d.responseId);
    expect(await deletionsOf(first.export.id)).toEqual([submitted[0]!.id]);

    await remove(submitted[1]!.id);
    await remove(submitted[2]!.id);
    const fresh = await owner.live.unwrap(
      owner.live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: survey.id } },
        body: { answers: answersFor(9) },
      }),
    );
    const second = await idsOf(survey.id, { format: 'ndjson', sinceExport: first.export.id });
    expect(second.ids).toEqual([fresh.id]);
    expect((await deletionsOf(second.export.id)).sort()).toEqual([submitted[1]!.id, submitted[2]!.id].sort());
    const third = await idsOf(survey.id, { format: 'ndjson', sinceExport: second.export.id });
    expect(third.ids).toEqual([]);
    expect(await deletionsOf(third.export.id)).toEqual([]);
    // A full re-export does not contain deleted responses either.
    const full = await idsOf(survey.id, { format: 'ndjson' });
    expect(full.ids.sort()).toEqual([submitted[3]!.id, submitted[4]!.id, fresh.id].sort());
    const page = await owner.live.GET('/api/v1/exports/{exportId}/deletions', {
      params: { path: { exportId: full.export.id }, query: { pageSize: 2 } },
    });
    expect(page.data?.pagination).toMatchObject({ totalItems: 3, totalPages: 2, hasMore: true });
  });
});
