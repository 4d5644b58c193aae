/**
 * Respondent writers of one tenant running together never deadlock: a `replace` sync (one transaction of many
 * statements), upsert syncs, PUT, DELETE and submissions naming the respondents. A PUT or DELETE answered
 * `deadlock detected` (500) when a per-tenant lock was taken after the statement's row locks (the respondent
 * triggers of migration 2026-11-25T0300) while a replace sync, holding that lock since its first batch, went on
 * to lock more rows. Real HTTP through the SDK and the real sync worker; the first test holds a replace-like
 * transaction open to make the interleaving certain.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalize } from '../../server/src/modules/respondents/records.js';
import { writeRespondents } from '../../server/src/modules/respondents/repository.js';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';
import { people, sync } from './fixtures.js';

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

async function launchedSurvey(client: Client): Promise<string> {
  const { data } = await client.POST('/api/v1/surveys', {
    body: surveyBody({ settings: { allowMultipleResponses: true } }),
  });
  const id = data!.data.id;
  expect((await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id } } })).response.status).toBe(200);
  return id;
}

/** Until the request's statement is waiting for a lock, or `done` settled; whichever comes first. */
async function untilBlockedOrDone(
  pattern: RegExp,
  done: Promise<unknown>,
  timeoutMs = 20_000,
): Promise<'blocked' | 'done'> {
  let settled = false;
  void done.finally(() => (settled = true));
  return eventually<'blocked' | 'done'>(
    async () => {
      if (settled) return 'done';
      const { rows } = await sql<{ query: string }>`
        select query from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
        t.db,
      );
      return rows.some((row) => pattern.test(row.query)) ? 'blocked' : undefined;
    },
    timeoutMs,
    'the request to finish or wait for a lock',
    20,
  );
}

describe('respondent writers of one tenant', () => {
  it('a DELETE and a PUT during a replace that then writes the same respondents both answer, and the replace commits', async () => {
    const { live, organizationId } = await tenantWithRaisedLimits(t);
    const tenant = { organizationId, environment: 'LIVE' as const };
    const records = people(3, { prefix: 'lo-' });
    await sync(live, 'upsert', records);
    const surveyId = await launchedSurvey(live);
    for (const record of records) {
      const answered = await live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: { answers: validAnswers, respondentExternalId: record.externalId as string },
      });
      expect(answered.response.status).toBe(201);
    }
    const [a, b, c] = records.map((record) =>
      normalize({ ...record, department: 'Moved' } as unknown as Parameters<typeof normalize>[0]),
    );

    // A replace's transaction: its first batch is written (and whatever it locks per tenant is now held) …
    let next!: () => void;
    let firstBatchWritten!: () => void;
    const proceed = new Promise<void>((resolve) => (next = resolve));
    const written = new Promise<void>((resolve) => (firstBatchWritten = resolve));
    const replace = t.db.transaction().execute(async (tx) => {
      await writeRespondents(tx, tenant, [c!], 'replace');
      firstBatchWritten();
      await proceed;
      // … then its later batches reach the respondents the DELETE and the PUT are changing.
      await writeRespondents(tx, tenant, [a!, b!], 'replace');
    });
    await written;

    const deleted = live.DELETE('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: a!.externalId } },
    });
    await untilBlockedOrDone(/delete from "respondents"/i, deleted);
    const put = live.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: b!.externalId } },
      body: { email: 'b@example.com', department: 'Put' },
    });
    await untilBlockedOrDone(/insert into respondents/i, put);
    next();

    await expect(replace).resolves.toBeUndefined();
    const [deleteAnswer, putAnswer] = await Promise.all([deleted, put]);
    expect(deleteAnswer.response.status, JSON.stringify(deleteAnswer.error)).toBe(200);
    expect([200, 201], JSON.stringify(putAnswer.error)).toContain(putAnswer.response.status);
  });

  it('replace and upsert syncs, PUTs, DELETEs and submissions at once: no 5xx, every sync completes', async () => {
    const { live } = await tenantWithRaisedLimits(t);
    const surveyId = await launchedSurvey(live);
    const everyone = people(1500, { prefix: 'st-' });
    await sync(live, 'upsert', everyone);
    const statuses: Array<{ what: string; status: number }> = [];
    const jobs: Array<{ status: string; failureReason: string | null }> = [];
    let running = true;
    const pick = () => everyone[Math.floor(Math.random() * everyone.length)]!.externalId as string;

    const syncs = (async () => {
      for (let round = 0; round < 4; round++) {
        const department = `D${round}`;
        const moved = everyone.map((record) => ({ ...record, department }));
        const { job } = await sync(live, round % 2 === 0 ? 'replace' : 'upsert', moved);
        jobs.push(job);
      }
      running = false;
    })();
    const writers = Array.from({ length: 4 }, async () => {
      while (running) {
        const externalId = pick();
        const [put, removed, answered] = await Promise.all([
          live.PUT('/api/v1/respondents/{externalId}', {
            params: { path: { externalId: pick() } },
            body: { email: 'w@example.com', department: 'Writer' },
          }),
          live.DELETE('/api/v1/respondents/{externalId}', { params: { path: { externalId } } }),
          live.POST('/api/v1/surveys/{id}/responses', {
            params: { path: { id: surveyId } },
            body: { answers: validAnswers, respondentExternalId: pick() },
          }),
        ]);
        statuses.push(
          { what: 'PUT', status: put.response.status },
          { what: 'DELETE', status: removed.response.status },
          { what: 'submit', status: answered.response.status },
        );
      }
    });
    await Promise.all([syncs, ...writers]);

    expect(statuses.filter((s) => s.status >= 500)).toEqual([]);
    expect(statuses.filter((s) => ![200, 201, 404].includes(s.status))).toEqual([]);
    expect(jobs.map((job) => [job.status, job.failureReason])).toEqual(
      Array.from({ length: 4 }, () => ['completed', null]),
    );
  }, 120_000);
});
