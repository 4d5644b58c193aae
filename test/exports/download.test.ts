/**
 * Downloads: headers, `Range` (206, 416, If-Range), a file spanning several stored chunks, expiry (410 and the
 * scheduled clean-up), states, isolation between tenants and environments, the scope, and the event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadExportToFile } from '@survey-service/sdk';
import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { exportsCleanup } from '../../server/src/modules/exports/jobs.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { activeSurvey, bulkInsert, exportToBuffer, parseCsv, tempFile, tenant } from './fixtures.js';

let t: TestService;
let owner: Awaited<ReturnType<typeof tenant>>;
let surveyId: string;
let big: Awaited<ReturnType<typeof exportToBuffer>>;

beforeAll(async () => {
  t = await startTestService();
  owner = await tenant(t);
  surveyId = (await activeSurvey(owner.live)).id;
  // About 1.9 MB of CSV: the file spans two stored chunks of 1 MiB.
  await bulkInsert(t, owner.organizationId, surveyId, 4000, { textLength: 420 });
  big = await exportToBuffer(owner.live, surveyId, { format: 'csv' });
});
afterAll(async () => {
  await t?.close();
});

const get = (exportId: string, key: string, headers: Record<string, string> = {}) =>
  fetch(`${t.url}/api/v1/exports/${exportId}/download`, { headers: { Authorization: `Bearer ${key}`, ...headers } });

describe('a download', () => {
  it('is the whole file with its media type, file name, length, ETag and Accept-Ranges', async () => {
    expect(big.export.size).toBeGreaterThan(1024 * 1024 + 1000);
    const chunks = await t.db
      .selectFrom('export_chunks')
      .select('seq')
      .where('export_id', '=', big.export.id)
      .execute();
    expect(chunks.length).toBe(2);
    const response = await get(big.export.id, owner.liveKey);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="survey-${surveyId}-${big.export.id}.csv"`,
    );
    expect(response.headers.get('content-length')).toBe(String(big.export.size));
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('etag')).toBe(`"${big.export.id}-1"`);
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(big.bytes)).toBe(true);
    const rows = await parseCsv(body.toString('utf8'));
    expect(rows.length).toBe(4001);
    expect(new Set(rows.slice(1).map((r) => r[0])).size).toBe(4000);
  });

  it('answers byte ranges with 206 and Content-Range, across the chunk boundary too', async () => {
    const size = big.export.size!;
    const boundary = 1024 * 1024;
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      [`bytes=${boundary - 5}-${boundary + 4}`, boundary - 5, boundary + 4],
      [`bytes=${boundary + 100}-`, boundary + 100, size - 1],
      ['bytes=-7', size - 7, size - 1],
      [`bytes=10-${size + 5000}`, 10, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const response = await get(big.export.id, owner.liveKey, { Range: range });
      expect(response.status, range).toBe(206);
      expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
      expect(response.headers.get('content-length')).toBe(String(end - start + 1));
      expect(Buffer.from(await response.arrayBuffer()).equals(big.bytes.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers 416 with the size for a range beyond the end, and ignores ranges it does not serve', async () => {
    const size = big.export.size!;
    const beyond = await get(big.export.id, owner.liveKey, { Range: `bytes=${size}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${size}`);
    expect(((await beyond.json()) as { error: { code: string } }).error.code).toBe('range_not_satisfiable');
    for (const range of ['bytes=0-1,5-9', 'items=0-5', 'bytes=9-2']) {
      const whole = await get(big.export.id, owner.liveKey, { Range: range });
      expect(whole.status, range).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).length).toBe(size);
    }
    // If-Range with another ETag: the file may have changed, so the whole file.
    const stale = await get(big.export.id, owner.liveKey, { Range: 'bytes=0-9', 'If-Range': '"something-else"' });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
    const fresh = await get(big.export.id, owner.liveKey, { Range: 'bytes=0-9', 'If-Range': `"${big.export.id}-1"` });
    expect(fresh.status).toBe(206);
    await fresh.arrayBuffer();
  });

  it('resumes a broken download in the SDK helper with Range', async () => {
    // A fetch that cuts the first download after 300 kB, as a dropped connection would.
    const seen: (string | null)[] = [];
    let cut = false;
    const flaky = t.client(owner.liveKey);
    flaky.use({
      onResponse({ request, response }) {
        seen.push(request.headers.get('range'));
        if (cut || !request.url.includes('/download') || !response.body) return response;
        cut = true;
        let sent = 0;
        const reader = response.body.getReader();
        const truncated = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { done, value } = await reader.read();
            if (done || sent > 300_000) {
              void reader.cancel();
              return controller.error(new Error('connection reset'));
            }
            sent += value.length;
            controller.enqueue(value);
          },
        });
        return new Response(truncated, { status: response.status, headers: response.headers });
      },
    });
    const file = await tempFile('resumed.csv');
    const written = await downloadExportToFile(flaky, big.export, file);
    expect(written).toBe(big.export.size);
    expect((await readFile(file)).equals(big.bytes)).toBe(true);
    expect(seen[0]).toBeNull();
    expect(seen[1]).toMatch(/^bytes=\d+-$/);
  });
});

describe('lifecycle', () => {
  it('expires after 7 days: 410 export_expired, and the clean-up deletes the file but keeps the export', async () => {
    const small = await exportToBuffer(owner.live, surveyId, {
      format: 'ndjson',
      submittedBefore: '2026-01-01T00:00:10Z',
    });
    expect(small.export.rowCount).toBe(9);
    const expiresIn = Date.parse(small.export.expiresAt!) - Date.parse(small.export.completedAt!);
    expect(expiresIn).toBe(7 * 24 * 3600 * 1000);
    await t.db
      .updateTable('exports')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('id', '=', small.export.id)
      .execute();
    const gone = await get(small.export.id, owner.liveKey);
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('export_expired');
    const result = await exportsCleanup.work({} as never, t.service.deps);
    expect(result).toMatchObject({ files: 1 });
    expect(
      await t.db.selectFrom('export_chunks').select('seq').where('export_id', '=', small.export.id).execute(),
    ).toEqual([]);
    // The big export was not touched.
    expect(
      (await t.db.selectFrom('export_chunks').select('seq').where('export_id', '=', big.export.id).execute()).length,
    ).toBe(2);
    expect((await get(small.export.id, owner.liveKey)).status).toBe(410);
    const still = await owner.live.unwrap(
      owner.live.GET('/api/v1/exports/{exportId}', { params: { path: { exportId: small.export.id } } }),
    );
    expect(still.status).toBe('completed');
  });

  it('refuses to download an export that is not completed (409), and reports a failure with its reason', async () => {
    const pending = await t.db
      .insertInto('exports')
      .values({
        organization_id: owner.organizationId,
        environment: 'LIVE',
        id: 'exp_01JD3MC6N2V8H4XJ9P5R7T1Q0D',
        survey_id: surveyId,
        format: 'csv',
        status: 'pending',
        question_ids: null,
        choice_values: 'ids',
        submitted_after: null,
        submitted_before: null,
        watermark: null,
        total_rows: null,
        row_count: null,
        size: null,
        file_attempt: null,
        error: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const response = await get(pending.id, owner.liveKey);
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_state');
    const deletions = await owner.live.GET('/api/v1/exports/{exportId}/deletions', {
      params: { path: { exportId: pending.id } },
    });
    expect(deletions.response.status).toBe(409);

    // A survey deleted before its export runs: the export fails and says why.
    const doomed = await activeSurvey(owner.live);
    await t.db.deleteFrom('surveys').where('id', '=', doomed.id).execute();
    await t.db
      .insertInto('exports')
      .values({
        organization_id: owner.organizationId,
        environment: 'LIVE',
        id: 'exp_01JD3MC6N2V8H4XJ9P5R7T1Q0E',
        survey_id: doomed.id,
        format: 'csv',
        status: 'pending',
        question_ids: null,
        choice_values: 'ids',
        submitted_after: null,
        submitted_before: null,
        watermark: null,
        total_rows: null,
        row_count: null,
        size: null,
        file_attempt: null,
        error: null,
      })
      .execute();
    const { runExport } = await import('../../server/src/modules/exports/runner.js');
    await runExport(t.service.deps, {
      exportId: 'exp_01JD3MC6N2V8H4XJ9P5R7T1Q0E',
      organizationId: owner.organizationId,
      environment: 'LIVE',
    });
    const failed = await owner.live.unwrap(
      owner.live.GET('/api/v1/exports/{exportId}', {
        params: { path: { exportId: 'exp_01JD3MC6N2V8H4XJ9P5R7T1Q0E' } },
      }),
    );
    expect(failed).toMatchObject({ status: 'failed', downloadUrl: null });
    expect(failed.error).toContain('was deleted');
    const failedDownload = await get(failed.id, owner.liveKey);
    expect(failedDownload.status).toBe(409);
  });

  it('emits responses.export.completed once, with the completed export, in the completing transaction', async () => {
    const events = await t.db
      .selectFrom('events')
      .select(['type', 'data', 'environment'])
      .where('organization_id', '=', owner.organizationId)
      .where('type', '=', 'responses.export.completed')
      .execute();
    const forBig = events.filter((e) => (e.data as { id: string }).id === big.export.id);
    expect(forBig).toHaveLength(1);
    expect(forBig[0]!.data).toEqual(big.export);
  });
});

describe('isolation and scopes', () => {
  it('another organization, the other environment and an unknown id all get 404; the scope is responses:read', async () => {
    const other = await tenant(t);
    for (const key of [other.liveKey, owner.testKey]) {
      expect((await get(big.export.id, key)).status).toBe(404);
      const client = t.client(key);
      expect(
        (await client.GET('/api/v1/exports/{exportId}', { params: { path: { exportId: big.export.id } } })).response
          .status,
      ).toBe(404);
      expect(
        (await client.GET('/api/v1/exports/{exportId}/deletions', { params: { path: { exportId: big.export.id } } }))
          .response.status,
      ).toBe(404);
      expect(
        (
          await client.POST('/api/v1/surveys/{id}/responses/export', {
            params: { path: { id: surveyId } },
            body: { format: 'csv' },
          })
        ).response.status,
      ).toBe(404);
    }
    expect((await get('exp_nonsense', owner.liveKey)).status).toBe(404);
    const writer = await t.createKey(owner.organizationId, { scopes: ['responses:write', 'surveys:read'] });
    const refused = await get(big.export.id, writer.key);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_scope');
    const reader = await t.createKey(owner.organizationId, { scopes: ['responses:read'] });
    expect((await get(big.export.id, reader.key, { Range: 'bytes=0-0' })).status).toBe(206);
  });
});
