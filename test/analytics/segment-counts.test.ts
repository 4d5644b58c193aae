/**
 * The exact per-segment counts (`analytics_segment_cells`) against the scan they replace, and the rule both
 * follow: a response is segmented by its respondent as they were when asked (its distribution's snapshot, else
 * the record when it was stored), and no later change to a respondent — through the API, a sync, SQL — moves it.
 * After responses stored (API, answer page) and deleted, respondent records created, changed and deleted,
 * snapshots, concurrent transactions and compaction, the counts of every field equal the scan's, code by code.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/src/lib/ids.js';
import {
  cellCounts,
  compactSegmentCounts,
  segmentCellCounts,
  segmentCountsApply,
  type AnalyticsScope,
  type CellRow,
  type SegmentField,
} from '../../server/src/modules/analytics/repository.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { allRecipients, waitForStatus } from '../distributions/fixtures.js';
import { sync } from '../respondents/fixtures.js';
import { generate, random, type Generated } from './fixtures.js';

let t: TestService;
let client: ReturnType<TestService['client']>;
let organizationId: string;
let data: Generated;

beforeAll(async () => {
  t = await startTestService();
  // Answer links point at this test server.
  t.service.deps.config.publicBaseUrl = t.url;
  const tenant = await t.createTenant('BUSINESS');
  organizationId = tenant.organizationId;
  client = t.client(tenant.liveKey);
  // One response per respondent: the survey analytics read from the per-segment counts.
  data = await generate(t, client, organizationId, 21, 5, false);
});
afterAll(async () => {
  await t?.close();
});

const segments: Array<[string, SegmentField]> = [
  ['department', { kind: 'column', column: 'department' }],
  ['location', { kind: 'column', column: 'location' }],
  ['jobTitle', { kind: 'column', column: 'job_title' }],
  ['employmentType', { kind: 'column', column: 'employment_type' }],
  ['tenure', { kind: 'tenure' }],
];

const sorted = (rows: CellRow[]) =>
  rows
    .map((row) => ({ segment: row.segment, code: row.code, n: row.n }))
    .sort((a, b) => String(a.segment).localeCompare(String(b.segment)) || a.code - b.code);

/** Every field's counts equal the scan's, for the whole survey and for a window of whole days. */
async function expectExact(surveyId = data.surveyId) {
  const windows = [
    {},
    { submittedAfter: new Date(Date.UTC(2026, 9, 3)), submittedBefore: new Date(Date.UTC(2026, 9, 7)) },
  ];
  for (const [name, segment] of segments) {
    for (const window of windows) {
      const scope: AnalyticsScope = {
        tenant: { organizationId, environment: 'LIVE' },
        surveyId,
        segment,
        distinctRespondents: false,
        snapshots: true,
        ...window,
      };
      expect(segmentCountsApply(scope)).toBe(true);
      const scanned = sorted(await cellCounts(t.db, scope, { whole: false }));
      expect(scanned.length).toBeGreaterThan(0);
      expect(sorted(await segmentCellCounts(t.db, scope)), `${name} ${JSON.stringify(window)}`).toEqual(scanned);
    }
  }
}

/** The group sizes (code −1 per day, summed) of one field, from the counts. */
async function sizes(field: SegmentField, surveyId = data.surveyId): Promise<Map<string | null, number>> {
  const rows = await segmentCellCounts(t.db, {
    tenant: { organizationId, environment: 'LIVE' },
    surveyId,
    segment: field,
    distinctRespondents: false,
    snapshots: true,
  });
  const result = new Map<string | null, number>();
  for (const row of rows) if (row.code < 0) result.set(row.segment, (result.get(row.segment) ?? 0) + row.n);
  return result;
}

const department: SegmentField = { kind: 'column', column: 'department' };

async function insertResponses(
  surveyId: string,
  respondents: Array<string | null>,
  options: { distributionId?: string; at?: Date } = {},
) {
  await t.db
    .insertInto('responses')
    .values(
      respondents.map((respondent, i) => ({
        id: newId('rsp'),
        survey_id: surveyId,
        organization_id: organizationId,
        environment: 'LIVE' as const,
        respondent_external_id: respondent,
        dedupe_key: null,
        answers: JSON.stringify([
          { questionId: 'nps', value: i % 11 },
          { questionId: 'tools', value: 1 + (i % 5) },
          { questionId: 'where', value: 'home' },
        ]),
        submitted_at: options.at ?? new Date(Date.UTC(2026, 9, 4, 10, i)),
        ...(options.distributionId ? { distribution_id: options.distributionId } : {}),
      })),
    )
    .execute();
}

const put = (externalId: string, body: Record<string, unknown>) =>
  client.PUT('/api/v1/respondents/{externalId}', {
    params: { path: { externalId } },
    body: { email: `${externalId.toLowerCase()}@example.com`, ...body } as never,
  });

describe('analytics_segment_cells', () => {
  it('equals the scan after the responses and respondents are written', async () => {
    await expectExact();
    // Manager breakdowns (a group per manager) and attributes scan instead.
    for (const segment of [
      { kind: 'column', column: 'manager_id' },
      { kind: 'attribute', name: 'level' },
    ] as SegmentField[]) {
      expect(
        segmentCountsApply({
          tenant: { organizationId, environment: 'LIVE' },
          surveyId: data.surveyId,
          segment,
          distinctRespondents: false,
          snapshots: true,
        }),
      ).toBe(false);
    }
    // The five responses without a respondent are counted once, under `*`, not under each of the five fields.
    const anonymous = await sql<{
      field: string;
      n: number;
    }>`select field, sum(u.n)::int as n from analytics_segment_cells, unnest(codes, counts) as u(code, n)
      where survey_id = ${data.surveyId} and u.code = -1 and (field = '*' or value is null) group by field`.execute(
      t.db,
    );
    expect(anonymous.rows.find((row) => row.field === '*')?.n).toBe(5);
    expect(anonymous.rows.find((row) => row.field === 'department')).toBeUndefined();
  });

  it('keeps past responses where they were asked when their respondent record is created, changed or deleted', async () => {
    // Responses of people the service does not know yet count under null, for good.
    await insertResponses(data.surveyId, ['NEW-1', 'NEW-2', 'NEW-3']);
    await expectExact();
    const before = new Map(await sizes(department));
    for (const id of ['NEW-1', 'NEW-2', 'NEW-3']) {
      expect(
        (
          await put(id, {
            department: 'Research',
            location: 'Oslo',
            jobTitle: 'Analyst',
            employmentType: 'full_time',
            managerId: 'ENG-21-0',
            hireDate: '2025-01-15',
          })
        ).response.status,
      ).toBeLessThan(300);
    }
    expect(await sizes(department)).toEqual(before);
    await expectExact();

    // A change of department, of hire date (tenure band) and of manager moves nothing already answered …
    const [first, second, third] = [...data.department.keys()];
    expect((await put(first!, { department: 'Research', hireDate: '2026-06-01' })).response.status).toBe(200);
    expect((await put(second!, { department: 'Sales', managerId: 'NEW-1', jobTitle: 'Lead' })).response.status).toBe(
      200,
    );
    expect((await put(third!, { hireDate: '2001-01-01', employmentType: 'contractor' })).response.status).toBe(200);
    expect(await sizes(department)).toEqual(before);
    await expectExact();

    // … nor does a deletion: the responses stay where they were.
    expect(
      (await client.DELETE('/api/v1/respondents/{externalId}', { params: { path: { externalId: first! } } })).response
        .status,
    ).toBe(200);
    expect(await sizes(department)).toEqual(before);
    await expectExact();

    // A response stored after the change is segmented by the record as it is then.
    await insertResponses(data.surveyId, ['NEW-1']);
    expect((await sizes(department)).get('Research')).toBe((before.get('Research') ?? 0) + 1);
    await expectExact();
  });

  it('moves no past response on a respondent sync (upsert and replace)', async () => {
    const ids = [...data.department.keys()].slice(1);
    const records = ids.slice(0, 30).map((externalId, i) => ({
      externalId,
      email: `${externalId.toLowerCase()}@example.com`,
      department: i % 2 === 0 ? 'Engineering' : 'Operations',
      location: 'Lisbon',
      hireDate: `201${i % 10}-05-01`,
      employmentType: i % 3 === 0 ? 'part_time' : 'full_time',
    }));
    const before = new Map(await sizes(department));
    const upserted = await sync(client, 'upsert', records);
    expect(upserted.job.status).toBe('completed');
    expect(await sizes(department)).toEqual(before);
    await expectExact();
    // Replace deletes everyone not in the request: their answers stay where they were given.
    const replaced = await sync(client, 'replace', records.slice(0, 20));
    expect(replaced.job.status).toBe('completed');
    expect(await sizes(department)).toEqual(before);
    await expectExact();
  });

  it('keeps a response through a distribution under the snapshot while the record changes', async () => {
    const people = ['SNAP-1', 'SNAP-2', 'SNAP-3', 'SNAP-4', 'SNAP-5', 'SNAP-6'];
    for (const id of people)
      expect((await put(id, { department: 'Snapshot', location: 'Rome' })).response.status).toBe(201);
    const distributed = await client.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId: data.surveyId } },
      body: {
        targeting: { filters: [{ field: 'department', operator: 'equals', value: 'Snapshot' }] },
        distribution: { method: 'link' },
      },
    });
    expect(distributed.response.status).toBe(202);
    const distributionId = distributed.data!.data.id;
    await waitForStatus(client, data.surveyId, distributionId, ['sent']);
    const recipients = await allRecipients(client, data.surveyId, distributionId);
    expect(recipients).toHaveLength(6);
    // Four answer through their personal links (the answer page), one more through a row written directly.
    for (const recipient of recipients.slice(0, 4)) {
      const answered = await fetch(recipient.link!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'nps=9&tools=4',
        redirect: 'manual',
      });
      expect(answered.status, await answered.text()).toBeLessThan(400);
    }
    await insertResponses(data.surveyId, [recipients[4]!.respondentExternalId], { distributionId });
    expect((await sizes(department)).get('Snapshot')).toBe(5);
    await expectExact();
    // Everyone moves to another department; the snapshot keeps the five responses where they were.
    for (const id of people)
      expect((await put(id, { department: 'Moved', location: 'Rome' })).response.status).toBe(200);
    expect((await sizes(department)).get('Snapshot')).toBe(5);
    expect((await sizes(department)).get('Moved') ?? 0).toBe(0);
    // The sixth answers through the API, after the move: the distribution reached them, so its snapshot counts.
    const viaApi = await client.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: data.surveyId } },
      body: {
        respondentExternalId: recipients[5]!.respondentExternalId,
        answers: [
          { questionId: 'nps', value: 3 },
          { questionId: 'tools', value: 2 },
        ],
      } as never,
    });
    expect(viaApi.response.status).toBe(201);
    expect(viaApi.data!.data.distributionId).toBe(distributionId);
    expect((await sizes(department)).get('Snapshot')).toBe(6);
    expect((await sizes(department)).get('Moved') ?? 0).toBe(0);
    // A row stored without a distribution takes the record as it is then.
    await insertResponses(data.surveyId, ['SNAP-1']);
    expect((await sizes(department)).get('Moved')).toBe(1);
    await expectExact();
  });

  it('follows deleted and changed responses', async () => {
    const some = data.responses.slice(0, 4);
    for (const response of some.slice(0, 3)) {
      expect(
        (
          await client.DELETE('/api/v1/surveys/{id}/responses/{responseId}', {
            params: { path: { id: data.surveyId, responseId: response.id } },
          })
        ).response.status,
      ).toBe(200);
    }
    await t.db
      .updateTable('responses')
      .set({ submitted_at: new Date(Date.UTC(2026, 9, 5, 12)) })
      .where('id', '=', some[3]!.id)
      .execute();
    await expectExact();
  });

  it('stays exact while responses and respondent changes commit concurrently (each response keeps what its statement saw)', async () => {
    const people = Array.from({ length: 12 }, (_, i) => `RACE-${i}`);
    for (const id of people) expect((await put(id, { department: 'Race-A' })).response.status).toBe(201);
    const rand = random(5);
    const pause = () => new Promise((resolve) => setTimeout(resolve, Math.floor(rand() * 15)));
    // Each transaction holds its change open for a few milliseconds, so that the two kinds overlap.
    const submit = (respondent: string | null) =>
      t.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('responses')
          .values({
            id: newId('rsp'),
            survey_id: data.surveyId,
            organization_id: organizationId,
            environment: 'LIVE',
            respondent_external_id: respondent,
            dedupe_key: null,
            answers: JSON.stringify([
              { questionId: 'nps', value: 7 },
              { questionId: 'tools', value: 3 },
            ]),
            submitted_at: new Date(Date.UTC(2026, 9, 6, 9)),
          })
          .execute();
        await pause();
      });
    const move = (respondent: string, to: string) =>
      t.db.transaction().execute(async (tx) => {
        await pause();
        await tx
          .updateTable('respondents')
          .set({ department: to, location: `${to}-city` })
          .where('organization_id', '=', organizationId)
          .where('external_id', '=', respondent)
          .execute();
        await pause();
      });
    const remove = (respondent: string) =>
      t.db.transaction().execute(async (tx) => {
        await tx
          .deleteFrom('respondents')
          .where('organization_id', '=', organizationId)
          .where('external_id', '=', respondent)
          .execute();
        await pause();
      });
    for (let round = 0; round < 4; round++) {
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 24; i++) {
        const person = people[Math.floor(rand() * people.length)]!;
        work.push(submit(person));
        if (i % 2 === 0)
          work.push(move(people[Math.floor(rand() * people.length)]!, rand() < 0.5 ? 'Race-A' : 'Race-B'));
      }
      if (round === 3) work.push(remove(people[0]!), remove(people[1]!));
      await Promise.all(work);
      await expectExact();
    }
  });

  it('counts a batch stored and deleted in one statement each, row by row, under the subject when stored', async () => {
    // The triggers of `responses` fire per row: a statement of 300 rows, and a delete of 100, count each one.
    const people = Array.from({ length: 300 }, (_, i) => `BATCH-${i}`);
    const answers = JSON.stringify([
      { questionId: 'nps', value: 8 },
      { questionId: 'tools', value: 4 },
    ]);
    await sql`insert into respondents (organization_id, environment, external_id, email, department, location, job_title, hire_date, employment_type, attributes, content_hash)
      select ${organizationId}, 'LIVE', id, lower(id) || '@example.com', 'Batch-A', 'Batch-city', 'Engineer', date '2020-01-15', 'full_time', '{}', 'x'
      from unnest(${people}::text[]) id`.execute(t.db);
    await sql`insert into responses (id, survey_id, organization_id, environment, respondent_external_id, dedupe_key, answers, submitted_at)
      select 'rsp_' || md5(random()::text), ${data.surveyId}, ${organizationId}, 'LIVE', id, null, ${answers}::jsonb, timestamptz '2026-10-06 10:00Z'
      from unnest(${people}::text[]) id`.execute(t.db);
    expect((await sizes(department)).get('Batch-A')).toBe(300);
    await sql`delete from responses where organization_id = ${organizationId} and environment = 'LIVE'
      and respondent_external_id = any(${people.slice(0, 100)})`.execute(t.db);
    // Stored while their records said Batch-A; moving them afterwards changes nothing.
    await sql`update respondents set department = 'Batch-B' where organization_id = ${organizationId} and environment = 'LIVE' and external_id = any(${people})`.execute(
      t.db,
    );
    expect((await sizes(department)).get('Batch-A')).toBe(200);
    await expectExact();
  });

  it('folds its deltas into one row per key without changing a count', async () => {
    const keys = () =>
      sql<{ rows: number }>`select count(*)::int as rows from analytics_segment_cells where survey_id = ${data.surveyId}
        group by organization_id, environment, survey_id, field, value, day`.execute(t.db);
    expect((await keys()).rows.some((k) => k.rows > 1)).toBe(true);
    expect(await compactSegmentCounts(t.db)).toBeGreaterThan(0);
    expect((await keys()).rows.every((k) => k.rows === 1)).toBe(true);
    await expectExact();
    // Nothing left to fold.
    expect(await compactSegmentCounts(t.db)).toBe(0);
  });

  it('encodes the answers by question id, a later answer to the same id winning, with few answers and with many', async () => {
    // analytics_encode collects up to 8 answers with a loop and more with one aggregate: both must agree.
    const questions = Array.from({ length: 10 }, (_, i) => ({ id: `q_${i + 1}`, type: 'nps' }));
    const encode = async (answers: unknown[]) =>
      (
        await sql<{
          nums: (number | null)[];
          cells: number[];
        }>`select nums, cells from analytics_encode(${JSON.stringify(answers)}::jsonb, ${JSON.stringify(questions)}::jsonb)`.execute(
          t.db,
        )
      ).rows[0]!;
    const few = await encode([
      { questionId: 'q_1', value: 3 },
      'not an answer',
      { questionId: 'q_2', value: 5 },
      { questionId: 'q_1', value: 7 },
    ]);
    expect(few.nums).toEqual([7, 5, ...Array<null>(8).fill(null)]);
    expect(few.cells).toEqual([7, 100005]);
    const many = await encode([
      ...questions.map((question, i) => ({ questionId: question.id, value: i + 1 })),
      { questionId: 5, value: 1 },
      { questionId: 'q_1', value: 0 },
    ]);
    expect(many.nums).toEqual([0, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(many.cells).toEqual([0, ...questions.slice(1).map((_, i) => (i + 1) * 100000 + i + 2)]);
  });
});
