/**
 * An event's fan-out into deliveries while its webhooks are being deleted: a delivery is created only for a
 * webhook that still exists when the event's transaction commits, and the change that records the event never
 * fails for it (it was a foreign-key violation on `webhook_deliveries_webhook`, a 500 of launchSurvey). Real
 * HTTP through the SDK, with a deletion held open in its own transaction to make the race certain, then many
 * launches, pauses and submissions while webhooks are created and deleted.
 */
import { citusMode } from '../citus/cluster.js';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue, recordSuccesses } from '../../server/src/modules/webhooks/queue.js';
import { deleteWebhook } from '../../server/src/modules/webhooks/repository.js';
import { eventually } from '../helpers/eventually.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';
import { startReceiver, type Receiver } from './receiver.js';

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

let t: TestService;
let receiver: Receiver;
/** The service's error lines: a 5xx is reported with what the service logged for it. */
const logged: string[] = [];
beforeAll(async () => {
  t = await startTestService({}, pino({ level: 'error' }, { write: (line: string) => void logged.push(line) }));
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function subscribe(client: Client, path: string): Promise<string> {
  const { data, response } = await client.POST('/api/v1/webhooks', {
    body: { url: receiver.url(path), events: ['*'] },
  });
  expect(response.status).toBe(201);
  return data!.data.id;
}

async function draftSurvey(client: Client): Promise<string> {
  const { data } = await client.POST('/api/v1/surveys', { body: surveyBody() });
  return data!.data.id;
}

/** Deliveries whose webhook does not exist (the foreign key forbids them; counted to be sure). */
async function orphans(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from webhook_deliveries d
    where not exists (select 1 from webhooks w where w.organization_id = d.organization_id and w.environment = d.environment and w.id = d.webhook_id)`.execute(
    t.db,
  );
  return rows[0]!.n;
}

/** Until a backend of this database waits for a lock with a statement matching `pattern`. */
async function untilWaitingOnLock(pattern: RegExp, timeoutMs = 20_000): Promise<void> {
  await eventually(
    async () => {
      // On Citus the statement waits on the node of the tenant's shard: citus_stat_activity shows every node's.
      const activity = citusMode ? sql`citus_stat_activity` : sql`pg_stat_activity`;
      const { rows } = await sql<{ query: string }>`
        select query from ${activity} where datname = current_database() and wait_event_type = 'Lock'`.execute(t.db);
      return rows.some((row) => pattern.test(row.query));
    },
    timeoutMs,
    `a statement matching ${pattern} waiting for a lock`,
    20,
  );
}

describe('fan-out while a webhook is deleted', () => {
  it('a launch whose event meets a deletion committing meanwhile succeeds, with deliveries only to the webhooks left', async () => {
    const { live, organizationId } = await tenantWithRaisedLimits(t);
    const doomed = await subscribe(live, '/doomed');
    const kept = await subscribe(live, '/kept');
    const surveyId = await draftSurvey(live);

    // The deletion takes the webhook's row lock and waits, uncommitted, while the launch records its event.
    let commitDeletion!: () => void;
    let deleted!: () => void;
    const released = new Promise<void>((resolve) => (commitDeletion = resolve));
    const deletedUncommitted = new Promise<void>((resolve) => (deleted = resolve));
    const deletion = t.db.transaction().execute(async (tx) => {
      expect(await deleteWebhook(tx, { organizationId, environment: 'LIVE' }, doomed)).toBe(true);
      deleted();
      await released;
    });
    await deletedUncommitted;
    const launch = live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });
    // The event writer (`record_event`) waits on the deleted webhook's row; on Citus its statement on the shard.
    await untilWaitingOnLock(/record_event|webhooks/i);
    commitDeletion();
    await deletion;

    const launched = await launch;
    expect(launched.response.status, JSON.stringify(launched.error)).toBe(200);
    const queued = await t.db
      .selectFrom('webhook_deliveries')
      .select(['webhook_id', 'event_type'])
      .where('organization_id', '=', organizationId)
      .where('event_type', '=', 'survey.launched')
      .execute();
    expect(queued).toEqual([{ webhook_id: kept, event_type: 'survey.launched' }]);
    expect(await orphans()).toBe(0);
  });

  it('many launches, pauses and submissions while webhooks are created and deleted: no 5xx, no orphan, every event recorded', async () => {
    const { live, organizationId } = await tenantWithRaisedLimits(t);
    const surveys = await Promise.all(Array.from({ length: 6 }, () => draftSurvey(live)));
    const statuses: number[] = [];
    const failures: string[] = [];
    const record = (response: Response, error: unknown) => {
      statuses.push(response.status);
      if (response.status >= 500) failures.push(`${response.url} ${response.status} ${JSON.stringify(error)}`);
    };
    let running = true;

    // Webhooks come and go the whole time.
    const churn = (async () => {
      let i = 0;
      while (running) {
        const ids = await Promise.all(Array.from({ length: 4 }, () => subscribe(live, `/churn/${i++}`)));
        // On purpose, not waiting for anything: the webhooks live a few milliseconds, some events fan out to them.
        await new Promise((resolve) => setTimeout(resolve, 5));
        const deleted = await Promise.all(
          ids.map((id) => live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } } })),
        );
        for (const d of deleted) record(d.response, d.error);
      }
    })();

    for (let round = 0; round < 6; round++) {
      const launches = await Promise.all(
        surveys.map((id) => live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id } } })),
      );
      for (const l of launches) record(l.response, l.error);
      const submissions = await Promise.all(
        surveys.flatMap((id) =>
          Array.from({ length: 3 }, () =>
            live.POST('/api/v1/surveys/{id}/responses', { params: { path: { id } }, body: { answers: validAnswers } }),
          ),
        ),
      );
      for (const s of submissions) record(s.response, s.error);
      const pauses = await Promise.all(
        surveys.map((id) => live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id } } })),
      );
      for (const p of pauses) record(p.response, p.error);
    }
    running = false;
    await churn;

    expect(failures, logged.join('')).toEqual([]);
    expect(statuses.filter((s) => s !== 200 && s !== 201)).toEqual([]);
    expect(await orphans()).toBe(0);
    const events = await t.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    expect(Number(events.n)).toBe(6 * (6 + 18 + 6));
  });

  it('a batch of successes never waits for a row another transaction holds (as a deletion holds its deliveries)', async () => {
    // No dispatcher runs here: the test claims and records the deliveries itself.
    const quiet = await startTestService({ role: 'api' });
    try {
      const { liveKey, organizationId } = await quiet.createTenant();
      const live = quiet.client(liveKey);
      const { data: webhook } = await live.POST('/api/v1/webhooks', {
        body: { url: receiver.url('/quiet'), events: ['*'] },
      });
      const { data: survey } = await live.POST('/api/v1/surveys', { body: surveyBody() });
      const id = survey!.data.id;
      await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id } } });
      await live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id } } });
      const claimed = await claimDue(quiet.db, 10, 60_000, [], citusMode);
      expect(claimed.map((row) => row.webhook_id)).toEqual([webhook!.data.id, webhook!.data.id]);
      const [free, held] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
      const outcome = { succeeded: true, responseStatus: 200, latencyMs: 3, error: null, excerpt: null };

      let release!: () => void;
      let locked!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const holding = new Promise<void>((resolve) => (locked = resolve));
      const holder = quiet.db.transaction().execute(async (tx) => {
        await sql`select 1 from webhook_deliveries where organization_id = ${organizationId} and id = ${held.id} for update`.execute(
          tx,
        );
        locked();
        await released;
      });
      await holding;
      const recorded = recordSuccesses(
        quiet.db,
        [free, held].map((row) => ({ row, outcome, at: new Date() })),
        citusMode,
      ).then(() => 'recorded');
      // A bound, not a pause: the race ends as soon as the batch is recorded (it should never wait on the holder).
      const waited = new Promise((resolve) => setTimeout(() => resolve('waited'), 3_000));
      const first = await Promise.race([recorded, waited]);
      release();
      await holder;
      await recorded;
      const statuses = await quiet.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'status'])
        .where('organization_id', '=', organizationId)
        .orderBy('id')
        .execute();
      if (citusMode) {
        // Citus refuses the row lock across shards: the batch waits, and records both once the holder is done.
        expect(statuses.map((row) => row.status)).toEqual(['succeeded', 'succeeded']);
        return;
      }
      expect(first).toBe('recorded');
      expect(statuses).toEqual(
        [
          { id: free.id, status: 'succeeded' },
          { id: held.id, status: 'pending' },
        ].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
    } finally {
      await quiet.close();
    }
  });
});
