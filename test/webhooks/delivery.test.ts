/**
 * Webhooks end to end: subscriptions through the SDK, events emitted by real changes, deliveries to a real
 * receiver on 127.0.0.1 verified by the `standardwebhooks` package and by the SDK's `verifyWebhook`, and every
 * delivery rule (retries, 3xx, 410, 429 + Retry-After, timeout, hang-up, body cap, redelivery, test sends,
 * rotation, the five-day rule). The service runs with a short retry schedule (300 ms steps) and a 1.5 s timeout,
 * set through the same config as WEBHOOK_RETRY_SCHEDULE_MS / WEBHOOK_TIMEOUT_MS; the real schedule's arithmetic
 * is tested in schedule.test.ts.
 */
import { verifyWebhook, type components } from '@survey-service/sdk';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../server/src/job-registry.js';
import { deleteExpiredEvents } from '../../server/src/modules/events/repository.js';
import { createAjv, loadDocument } from '../contract/document.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';
import { eventually } from '../helpers/eventually.js';
import { failFirst, hangUp, ok, slow, startReceiver, status, type Receiver, type Received } from './receiver.js';

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
type WebhookEvents = components['schemas']['WebhookCreate']['events'];

const schedule = [0, 300, 300, 300, 300, 300, 300, 300];
let t: TestService;
let live: Client;
let testEnv: Client;
let receiver: Receiver;
const validateEvent = createAjv(loadDocument()).compile({ $ref: 'openapi.json#/components/schemas/Event' });

beforeAll(async () => {
  t = await startTestService({ webhookRetryScheduleMs: schedule, webhookTimeoutMs: 1500 });
  ({ live, test: testEnv } = await tenantWithRaisedLimits(t));
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function subscribe(path: string, events: WebhookEvents = ['*'], client: Client = live) {
  const { data, error, response } = await client.POST('/api/v1/webhooks', {
    body: { url: receiver.url(path), events },
  });
  expect(error, JSON.stringify(error)).toBeUndefined();
  expect(response.status).toBe(201);
  return data!.data as components['schemas']['WebhookCreated'] & { secret: string };
}

async function launchedSurvey(client: Client = live) {
  const { data } = await client.POST('/api/v1/surveys', { body: surveyBody() });
  const id = data!.data.id;
  const launched = await client.POST('/api/v1/surveys/{id}/launch', { params: { path: { id } } });
  expect(launched.response.status).toBe(200);
  return id;
}

async function deliveries(client: Client, id: string) {
  const { data, error } = await client.GET('/api/v1/webhooks/{id}/deliveries', {
    params: { path: { id }, query: { pageSize: 100 } },
  });
  expect(error, JSON.stringify(error)).toBeUndefined();
  return data!.data;
}

/**
 * Deliveries of a webhook still pending, sent or not (the API lists them too; this reads the table itself). Every
 * request to an endpoint comes from a pending row: a retry is queued in the transaction that records the failure
 * before it, an event's deliveries in the transaction of its change. None pending, every request it will ever get
 * has arrived: the observable a "nothing more arrives" assertion waits for, instead of a pause.
 */
async function pendingDeliveries(webhookId: string): Promise<number> {
  const { n } = await t.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Both verifiers must accept a delivery; returns the event. */
function verifyBoth(received: Received, secret: string) {
  const fromPackage = new Webhook(secret).verify(received.body, received.headers as Record<string, string>);
  const fromSdk = verifyWebhook(received.body, received.headers, secret);
  expect(fromSdk).toEqual(fromPackage);
  expect(validateEvent(fromSdk), JSON.stringify(validateEvent.errors)).toBe(true);
  return fromSdk as { id: string; type: string; createdAt: string; data: Record<string, unknown> };
}

describe('subscriptions', () => {
  it('shows the secret once, never in reads, and never in idempotent replays', async () => {
    const body = { url: receiver.url('/once'), events: ['survey.launched'] as WebhookEvents, description: 'dashboard' };
    const first = await live.POST('/api/v1/webhooks', {
      body,
      params: { header: { 'Idempotency-Key': 'create-once' } },
    });
    const created = first.data!.data;
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, description: 'dashboard' });
    const replay = await live.POST('/api/v1/webhooks', {
      body,
      params: { header: { 'Idempotency-Key': 'create-once' } },
    });
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data!.data).toEqual({ ...created, secret: null });
    const stored = await t.db
      .selectFrom('idempotency_keys')
      .select(sql<string>`response_body::text`.as('body'))
      .execute();
    expect(stored.some((row) => row.body.includes(created.secret!))).toBe(false);
    expect(stored.some((row) => row.body.includes(created.id))).toBe(true);
    const got = await live.GET('/api/v1/webhooks/{id}', { params: { path: { id: created.id } } });
    expect(got.data!.data).not.toHaveProperty('secret');
    const list = await live.GET('/api/v1/webhooks', {});
    expect(list.data!.data.map((w) => w.id)).toContain(created.id);
    expect(JSON.stringify(list.data)).not.toContain('whsec_');
  });

  it('refuses unknown event types and webhook.test, naming the valid ones', async () => {
    const unknown = await live.POST('/api/v1/webhooks', {
      body: { url: receiver.url('/x'), events: ['survey.launched', 'survey.exploded' as never] },
    });
    expect(unknown.response.status).toBe(400);
    // The contract's enum refuses it; the detail names the valid types.
    const unknownDetail = unknown.error!.error.details!.find((d) => d.path === '/body/events/1')!;
    expect(unknownDetail.code).toBe('enum');
    expect(unknownDetail.message).toContain('response.submitted');
    const test = await live.POST('/api/v1/webhooks', { body: { url: receiver.url('/x'), events: ['webhook.test'] } });
    expect(test.response.status).toBe(400);
    const detail = test.error!.error.details!.find((d) => d.path === '/body/events/0')!;
    expect(detail.message).toContain('cannot be subscribed');
    expect(detail.message).toContain('response.submitted');
    expect(detail.code).toBe('enum');
  });

  it('refuses URLs that resolve to private addresses, even with loopback allowed', async () => {
    for (const url of [
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest',
      'http://[fd00::1]/',
      'http://[::ffff:192.168.1.1]/',
      'ftp://127.0.0.1/',
    ]) {
      const { response, error } = await live.POST('/api/v1/webhooks', { body: { url, events: ['*'] } });
      expect(response.status, url).toBe(400);
      expect(error!.error.details![0]).toMatchObject({ path: '/body/url', code: 'invalid_value' });
    }
  });

  it('updates, disables (visible in the resource), re-enables and deletes', async () => {
    const hook = await subscribe('/crud', ['survey.launched']);
    const path = { params: { path: { id: hook.id } } };
    const disabled = await live.PATCH('/api/v1/webhooks/{id}', {
      ...path,
      body: { enabled: false, description: 'paused' },
    });
    expect(disabled.data!.data).toMatchObject({ enabled: false, disabledReason: 'manual', description: 'paused' });
    expect(disabled.data!.data.disabledAt).not.toBeNull();
    const enabled = await live.PATCH('/api/v1/webhooks/{id}', {
      ...path,
      body: { enabled: true, events: ['survey.closed'] },
    });
    expect(enabled.data!.data).toMatchObject({
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      events: ['survey.closed'],
    });
    const bad = await live.PATCH('/api/v1/webhooks/{id}', { ...path, body: { url: 'http://192.168.0.1/' } });
    expect(bad.response.status).toBe(400);
    const deleted = await live.DELETE('/api/v1/webhooks/{id}', path);
    expect(deleted.data!.data).toEqual({ id: hook.id, deleted: true });
    expect((await live.GET('/api/v1/webhooks/{id}', path)).response.status).toBe(404);
    expect((await live.DELETE('/api/v1/webhooks/{id}', path)).response.status).toBe(404);
    expect((await live.GET('/api/v1/webhooks/{id}', { params: { path: { id: 'whk_nope' } } })).response.status).toBe(
      404,
    );
  });
});

describe('events and delivery', () => {
  it('delivers a survey launch to subscribers, signed for both verifiers, and lists it in listEvents', async () => {
    const all = await subscribe('/all', ['*']);
    const launches = await subscribe('/launches', ['survey.launched']);
    const closes = await subscribe('/closes', ['survey.closed']);
    const surveyId = await launchedSurvey();
    const [atAll] = await receiver.waitFor('/all', 1);
    const [atLaunches] = await receiver.waitFor('/launches', 1);
    const event = verifyBoth(atAll!, all.secret);
    expect(event).toMatchObject({ type: 'survey.launched', data: { id: surveyId, status: 'active' } });
    expect(atAll!.headers['webhook-id']).toBe(event.id);
    expect(verifyBoth(atLaunches!, launches.secret).id).toBe(event.id);
    // The other secret does not verify it.
    expect(() => verifyWebhook(atAll!.body, atAll!.headers, launches.secret)).toThrow();
    expect(receiver.received('/closes')).toHaveLength(0);

    const listed = await live.GET('/api/v1/events', { params: { query: { type: 'survey.launched' } } });
    expect(listed.data!.data[0]).toEqual(event);
    await eventually(async () => ((await deliveries(live, all.id))[0]?.status === 'succeeded' ? true : undefined));
    const [delivery] = await deliveries(live, all.id);
    expect(delivery).toMatchObject({
      eventId: event.id,
      eventType: 'survey.launched',
      attempt: 1,
      status: 'succeeded',
      responseStatus: 200,
      error: null,
      responseExcerpt: '{"received":true}',
      nextRetryAt: null,
    });
    const one = await live.GET('/api/v1/webhooks/{id}/deliveries/{deliveryId}', {
      params: { path: { id: all.id, deliveryId: delivery!.id } },
    });
    expect(one.data!.data).toEqual(delivery);
    const elsewhere = await live.GET('/api/v1/webhooks/{id}/deliveries/{deliveryId}', {
      params: { path: { id: launches.id, deliveryId: delivery!.id } },
    });
    expect(elsewhere.response.status).toBe(404);

    // Pause and close: one event each, delivered to the matching subscriptions.
    await live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id: surveyId } } });
    await live.POST('/api/v1/surveys/{id}/close', { params: { path: { id: surveyId } } });
    const [closed] = await receiver.waitFor('/closes', 1);
    expect(verifyBoth(closed!, closes.secret)).toMatchObject({ type: 'survey.closed', data: { status: 'closed' } });
    // Delivery is at least once: an attempt that outlives its lease on a loaded machine is sent again, with the same
    // `webhook-id`, which is what a receiver deduplicates by. Each event arrives, under one id.
    const typeById = await eventually(() => {
      const byId = new Map(
        receiver.received('/all').map((r) => [String(r.headers['webhook-id']), JSON.parse(r.body).type as string]),
      );
      return byId.size >= 3 ? byId : undefined;
    });
    expect([...typeById.values()].sort()).toEqual(['survey.closed', 'survey.launched', 'survey.paused']);
    for (const id of [all.id, launches.id, closes.id])
      await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } } });
  });

  it('emits nothing for a refused change, and keeps events to their tenant and environment', async () => {
    const before = (await live.GET('/api/v1/events', {})).data!.pagination.totalItems;
    const { data } = await live.POST('/api/v1/surveys', { body: { title: 'empty' } });
    const refused = await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: data!.data.id } } });
    expect(refused.response.status).toBe(409);
    expect((await live.GET('/api/v1/events', {})).data!.pagination.totalItems).toBe(before);
    const other = await tenantWithRaisedLimits(t);
    expect((await other.live.GET('/api/v1/events', {})).data!.data).toEqual([]);
    expect((await testEnv.GET('/api/v1/events', {})).data!.data).toEqual([]);
  });

  it('filters events by type and time window, newest first', async () => {
    const start = new Date().toISOString();
    const surveyId = await launchedSurvey();
    const response = await live.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: { respondentExternalId: 'E-1', answers: validAnswers },
    });
    expect(response.response.status).toBe(201);
    const since = await live.GET('/api/v1/events', { params: { query: { createdAfter: start } } });
    expect(since.data!.data.map((e) => e.type)).toEqual(['response.submitted', 'survey.launched']);
    const submitted = since.data!.data[0]!;
    expect(submitted.data).toEqual(response.data!.data);
    const before = await live.GET('/api/v1/events', {
      params: { query: { createdAfter: start, createdBefore: submitted.createdAt } },
    });
    expect(before.data!.data.map((e) => e.type)).toEqual(['survey.launched']);
    const onlyResponses = await live.GET('/api/v1/events', {
      params: { query: { type: 'response.submitted', createdAfter: start } },
    });
    expect(onlyResponses.data!.data).toHaveLength(1);
  });

  it('delivers response.submitted for an answer of every newer question type: valid by the contract, the stored response', async () => {
    const hook = await subscribe('/rich', ['response.submitted']);
    const created = await live.POST('/api/v1/surveys', {
      body: {
        title: 'Every answer shape',
        questions: [
          {
            id: 'grid',
            type: 'matrix',
            text: 'How much do you agree?',
            rows: [
              { id: 'clear', text: 'I know what is expected of me' },
              { id: 'tools', text: 'I have the tools I need' },
              { id: 'grow', text: 'I can grow here' },
            ],
            scale: { min: 1, max: 5 },
            allowNotApplicable: true,
            required: false,
          },
          {
            id: 'often',
            type: 'matrix',
            text: 'How often?',
            rows: [
              { id: 'meetings', text: 'Team meetings' },
              { id: 'reviews', text: 'Reviews' },
            ],
            columns: [
              { id: 'never', label: 'Never' },
              { id: 'weekly', label: 'Weekly' },
            ],
            allowNotApplicable: true,
          },
          {
            id: 'rank',
            type: 'ranking',
            text: 'Rank these benefits',
            choices: [
              { id: 'pay', label: 'Pay' },
              { id: 'time', label: 'Time off' },
              { id: 'growth', label: 'Growth' },
            ],
          },
          { id: 'hours', type: 'number', text: 'Hours of focus time a week', min: 0, max: 80 },
          { id: 'started', type: 'date', text: 'Your start date', min: '1990-01-01', max: '2026-12-31' },
          {
            id: 'where',
            type: 'single_choice',
            text: 'Where do you work?',
            choices: [
              { id: 'office', label: 'Office' },
              { id: 'home', label: 'Home' },
            ],
            allowOther: true,
          },
          {
            id: 'perks',
            type: 'multiple_choice',
            text: 'Which perks do you use?',
            choices: [
              { id: 'gym', label: 'Gym' },
              { id: 'lunch', label: 'Lunch' },
            ],
            allowOther: true,
          },
          { id: 'rating', type: 'rating', text: 'Your manager', allowNotApplicable: true },
        ],
      },
    });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const surveyId = created.data!.data.id;
    await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });
    // A grid with an N/A row and an unanswered one, a grid of columns with N/A, a ranking, a fractional number, a
    // date, "Other" alone and beside a choice, and a whole answer N/A.
    const answers: components['schemas']['Answer'][] = [
      { questionId: 'grid', value: { clear: 4, tools: null } },
      { questionId: 'often', value: { meetings: 'weekly', reviews: null } },
      { questionId: 'rank', value: ['time', 'pay', 'growth'] },
      { questionId: 'hours', value: 7.5 },
      { questionId: 'started', value: '2024-02-29' },
      { questionId: 'where', value: 'other', other: 'Café, sometimes' },
      { questionId: 'perks', value: ['lunch', 'other'], other: 'Bike "lease"' },
      { questionId: 'rating', value: null },
    ];
    const submitted = await live.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: { respondentExternalId: 'E-rich', answers },
    });
    expect(submitted.error, JSON.stringify(submitted.error)).toBeUndefined();
    const [delivered] = await receiver.waitFor('/rich', 1);
    // verifyBoth validates the event against the contract's Event (its data a Response).
    const event = verifyBoth(delivered!, hook.secret);
    expect(event.type).toBe('response.submitted');
    const stored = await live.GET('/api/v1/surveys/{id}/responses/{responseId}', {
      params: { path: { id: surveyId, responseId: submitted.data!.data.id } },
    });
    expect(event.data).toEqual(stored.data!.data);
    expect(event.data).toEqual(submitted.data!.data);
    expect(event.data.answers).toEqual(answers);
    await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } });
  });

  it('retries failures on the schedule with the same webhook-id, and shows nextRetryAt', async () => {
    receiver.on('/flaky', failFirst(2));
    const hook = await subscribe('/flaky', ['survey.launched']);
    await launchedSurvey();
    const got = await receiver.waitFor('/flaky', 3);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got) verifyBoth(r, hook.secret);
    // Retries wait their delay (300 ms ± 10 %).
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(250);
    const rows = await eventually(async () => {
      const list = await deliveries(live, hook.id);
      return list.length === 3 && list[0]!.status === 'succeeded' ? list : undefined;
    });
    expect(rows.map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([
      [3, 'succeeded', 200],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ]);
    expect(rows[2]!.error).toBe('HTTP 500');
    expect(rows[2]!.responseExcerpt).toBe('status 500');
    const gap = Date.parse(rows[2]!.nextRetryAt!) - Date.parse(rows[2]!.deliveredAt!);
    expect(gap).toBeGreaterThanOrEqual(260);
    expect(gap).toBeLessThanOrEqual(340);
    expect(rows[0]!.nextRetryAt).toBeNull();
    const failed = await live.GET('/api/v1/webhooks/{id}/deliveries', {
      params: { path: { id: hook.id }, query: { status: 'failed' } },
    });
    expect(failed.data!.data).toHaveLength(2);
    // Time window: createdAfter inclusive, createdBefore exclusive.
    const window = await live.GET('/api/v1/webhooks/{id}/deliveries', {
      params: {
        path: { id: hook.id },
        query: { createdAfter: rows[1]!.createdAt, createdBefore: rows[0]!.createdAt, eventType: 'survey.launched' },
      },
    });
    expect(window.data!.data.map((d) => d.attempt)).toEqual([2]);
    const none = await live.GET('/api/v1/webhooks/{id}/deliveries', {
      params: { path: { id: hook.id }, query: { eventType: 'response.submitted' } },
    });
    expect(none.data!.data).toEqual([]);
  });

  it('gives up after the last attempt of the schedule', async () => {
    receiver.on('/dead', status(500));
    const hook = await subscribe('/dead', ['survey.launched']);
    await launchedSurvey();
    await receiver.waitFor('/dead', schedule.length, 20_000);
    const rows = await eventually(async () => {
      const list = await deliveries(live, hook.id);
      return list.length === schedule.length && list.every((d) => d.status === 'failed') ? list : undefined;
    });
    expect(rows[0]).toMatchObject({ attempt: schedule.length, nextRetryAt: null });
    // The last failure was recorded without a retry queued with it: nothing is left to send.
    expect(await pendingDeliveries(hook.id)).toBe(0);
    expect(receiver.received('/dead')).toHaveLength(schedule.length);
  });

  it('does not follow redirects, and 410 disables the webhook', async () => {
    receiver.on('/moved', status(302, { location: receiver.url('/target') }));
    const moved = await subscribe('/moved', ['survey.launched']);
    receiver.on('/gone', status(410));
    const gone = await subscribe('/gone', ['survey.launched']);
    await launchedSurvey();
    await receiver.waitFor('/moved', 2);
    const [redirected] = (await deliveries(live, moved.id)).slice(-1);
    expect(redirected).toMatchObject({ status: 'failed', responseStatus: 302 });
    expect(redirected!.error).toContain('redirects are not followed');
    expect(receiver.received('/target')).toHaveLength(0);

    await receiver.waitFor('/gone', 1);
    const disabled = await eventually(async () => {
      const webhook = (await live.GET('/api/v1/webhooks/{id}', { params: { path: { id: gone.id } } })).data!.data;
      return webhook.enabled ? undefined : webhook;
    });
    expect(disabled.disabledReason).toBe('endpoint_gone');
    // A later launch: its deliveries are queued by the launch itself, and it reaches the webhook still enabled.
    const later = await launchedSurvey();
    await eventually(
      () => receiver.received('/moved').some((r) => JSON.parse(r.body).data.id === later),
      15_000,
      'the later launch at /moved',
    );
    expect(await pendingDeliveries(gone.id)).toBe(0);
    expect(receiver.received('/gone')).toHaveLength(1);
    const [only, ...more] = await deliveries(live, gone.id);
    expect(more).toEqual([]);
    expect(only).toMatchObject({ responseStatus: 410, nextRetryAt: null });
    const redeliver = await live.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', {
      params: { path: { id: gone.id, deliveryId: only!.id } },
    });
    expect(redeliver.response.status).toBe(409);
    await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: moved.id } } });
  });

  it('honours Retry-After on 429 and 503 (a lower bound for the next attempt)', async () => {
    receiver.on('/busy', (res, n) => (n === 0 ? status(429, { 'retry-after': '1' })(res, n) : ok(res, n)));
    const hook = await subscribe('/busy', ['survey.launched']);
    await launchedSurvey();
    const got = await receiver.waitFor('/busy', 2);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(950);
    const rows = await deliveries(live, hook.id);
    const first = rows.find((d) => d.attempt === 1)!;
    expect(Date.parse(first.nextRetryAt!) - Date.parse(first.deliveredAt!)).toBeGreaterThanOrEqual(990);
    await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } });
  });

  it('records timeouts, hang-ups and only the first bytes of a large answer; a slow endpoint does not hold up others', async () => {
    receiver.on('/slow', slow(4000));
    receiver.on('/hangup', hangUp);
    receiver.on('/big', (res) => void res.writeHead(200).end('x'.repeat(1_000_000)));
    const slowHook = await subscribe('/slow', ['response.submitted']);
    const hangupHook = await subscribe('/hangup', ['survey.launched']);
    const big = await subscribe('/big', ['survey.launched']);
    const fast = await subscribe('/fast', ['response.submitted']);
    const surveyId = await launchedSurvey();
    // 40 responses: the slow endpoint holds its 16 slots for 1.5 s each (the timeout), while the fast one gets
    // each response within a fraction of that — a shared queue would make it wait behind the timeouts.
    const committed = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const { data } = await live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: { respondentExternalId: `S-${i}`, answers: validAnswers },
      });
      committed.set(data!.data.id, Date.now());
    }
    const lags = (await receiver.waitFor('/fast', 40))
      .map((r) => r.at - committed.get(JSON.parse(r.body).data.id)!)
      .sort((a, b) => a - b);
    expect(lags[20]).toBeLessThan(700);
    expect(receiver.received('/slow').length).toBeGreaterThanOrEqual(16);

    const timedOut = await eventually(async () =>
      (await deliveries(live, slowHook.id)).find((d) => d.status === 'failed'),
    );
    expect(timedOut).toMatchObject({ responseStatus: null, error: 'timeout after 1500 ms', responseExcerpt: null });
    expect(timedOut.latencyMs).toBeGreaterThanOrEqual(1400);
    const hungUp = await eventually(async () =>
      (await deliveries(live, hangupHook.id)).find((d) => d.status === 'failed'),
    );
    expect(hungUp.responseStatus).toBeNull();
    expect(hungUp.error).toMatch(/ECONNRESET|socket hang up/);
    const bigDelivery = await eventually(async () =>
      (await deliveries(live, big.id)).find((d) => d.status !== 'pending'),
    );
    expect(bigDelivery.status).toBe('succeeded');
    expect(bigDelivery.responseExcerpt).toBe('x'.repeat(1024));
    for (const id of [slowHook.id, hangupHook.id, big.id, fast.id])
      await live.PATCH('/api/v1/webhooks/{id}', { params: { path: { id } }, body: { enabled: false } });
  });
});

describe('operator tools', () => {
  it('redelivers an event as a new attempt with the same webhook-id, not retried', async () => {
    const hook = await subscribe('/again', ['survey.launched']);
    await launchedSurvey();
    const [first] = await receiver.waitFor('/again', 1);
    const [delivery] = await eventually(async () => {
      const list = await deliveries(live, hook.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    });
    receiver.on('/again', status(500));
    const { data, response } = await live.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', {
      params: { path: { id: hook.id, deliveryId: delivery!.id } },
    });
    expect(response.status).toBe(202);
    expect(data!.data).toMatchObject({ eventId: delivery!.eventId, attempt: 2, status: 'pending' });
    const [, second] = await receiver.waitFor('/again', 2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    const after = await eventually(async () => {
      const got = (
        await live.GET('/api/v1/webhooks/{id}/deliveries/{deliveryId}', {
          params: { path: { id: hook.id, deliveryId: data!.data.id } },
        })
      ).data!.data;
      return got.status === 'failed' ? got : undefined;
    });
    expect(after.nextRetryAt).toBeNull();
    // A manual attempt's failure queues no retry.
    expect(await pendingDeliveries(hook.id)).toBe(0);
    expect(receiver.received('/again')).toHaveLength(2);
    await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } });
  });

  it('sends webhook.test to that webhook only, even when disabled, and lists the outcome', async () => {
    const target = await subscribe('/tested', ['*']);
    const bystander = await subscribe('/bystander', ['*']);
    await live.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: target.id } }, body: { enabled: false } });
    const { data, response } = await live.POST('/api/v1/webhooks/{id}/test', { params: { path: { id: target.id } } });
    expect(response.status).toBe(202);
    expect(data!.data).toMatchObject({ eventType: 'webhook.test', status: 'pending', attempt: 1 });
    const [got] = await receiver.waitFor('/tested', 1);
    expect(verifyBoth(got!, target.secret)).toMatchObject({ type: 'webhook.test', data: { webhookId: target.id } });
    await eventually(async () => ((await deliveries(live, target.id))[0]?.status === 'succeeded' ? true : undefined));
    // The test send's deliveries were queued by its request (202): none to the bystander, so none can arrive.
    expect(await deliveries(live, bystander.id)).toEqual([]);
    expect(receiver.received('/bystander')).toHaveLength(0);
    const events = await live.GET('/api/v1/events', { params: { query: { type: 'webhook.test' } } });
    expect(events.data!.data[0]!.id).toBe(data!.data.eventId);
    await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: bystander.id } } });
  });

  it('rotates the secret: both sign during the overlap, only the new one after it', async () => {
    const hook = await subscribe('/rotate', ['survey.launched']);
    const rotated = await live.POST('/api/v1/webhooks/{id}/rotate-secret', {
      params: { path: { id: hook.id }, header: { 'Idempotency-Key': 'rotate-1' } },
    });
    expect(rotated.response.status).toBe(200);
    const newSecret = rotated.data!.data.secret!;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(hook.secret);
    const overlap = Date.parse(rotated.data!.data.previousSecretExpiresAt) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3600_000);
    const replay = await live.POST('/api/v1/webhooks/{id}/rotate-secret', {
      params: { path: { id: hook.id }, header: { 'Idempotency-Key': 'rotate-1' } },
    });
    expect(replay.data!.data.secret).toBeNull();

    await launchedSurvey();
    const [during] = await receiver.waitFor('/rotate', 1);
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verifyBoth(during!, hook.secret);
    verifyBoth(during!, newSecret);

    // The overlap window ends (moved into the past here): only the new secret signs.
    await t.db
      .updateTable('webhook_secrets')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('webhook_id', '=', hook.id)
      .where('expires_at', 'is not', null)
      .execute();
    await launchedSurvey();
    const [, after] = await receiver.waitFor('/rotate', 2);
    expect(String(after!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    verifyBoth(after!, newSecret);
    expect(() => verifyWebhook(after!.body, after!.headers, hook.secret)).toThrow();
    expect(() => new Webhook(hook.secret).verify(after!.body, after!.headers as Record<string, string>)).toThrow();
    await live.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } });
  });

  it('disables a webhook whose deliveries have all failed for five days', async () => {
    receiver.on('/failing', status(500));
    const hook = await subscribe('/failing', ['survey.launched']);
    // Five days of failures, compressed: the failure clock started six days ago.
    await t.db
      .updateTable('webhooks')
      .set({ failing_since: new Date(Date.now() - 6 * 24 * 3600_000) })
      .where('id', '=', hook.id)
      .execute();
    await launchedSurvey();
    await receiver.waitFor('/failing', 1);
    const webhook = await eventually(async () => {
      const got = (await live.GET('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } })).data!.data;
      return got.enabled ? undefined : got;
    });
    expect(webhook.disabledReason).toBe('failing');
    expect((await deliveries(live, hook.id))[0]!.nextRetryAt).toBeNull();
    // Disabling cancelled the retries: nothing is left to send.
    expect(await pendingDeliveries(hook.id)).toBe(0);
    expect(receiver.received('/failing')).toHaveLength(1);
  });

  it('emits respondents.sync.completed with the finished job', async () => {
    const hook = await subscribe('/sync', ['respondents.sync.completed', 'respondents.sync.failed']);
    const started = await live.POST('/api/v1/respondents/sync', {
      body: { mode: 'upsert', respondents: [{ externalId: 'E-1', email: 'a@example.com' }] },
    });
    expect(started.response.status).toBe(202);
    const [got] = await receiver.waitFor('/sync', 1);
    const event = verifyBoth(got!, hook.secret);
    expect(event).toMatchObject({
      type: 'respondents.sync.completed',
      data: { jobId: started.data!.data.jobId, status: 'completed' },
    });
  });
});

describe('retention', () => {
  it('deletes events older than 30 days with their deliveries, hourly', async () => {
    const hook = await subscribe('/retention', ['survey.launched']);
    await launchedSurvey();
    await receiver.waitFor('/retention', 1);
    const [delivery] = await eventually(async () => {
      const list = await deliveries(live, hook.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    });
    // Age that event past the retention period; the other events stay.
    await sql`update events set created_at = now() - interval '31 days' where id = ${delivery!.eventId}`.execute(t.db);
    // By id, not by count: earlier tests' background work may still add events while this one runs.
    const eventIds = async () =>
      (
        await live.GET('/api/v1/events', { params: { query: { type: 'survey.launched', pageSize: 100 } } })
      ).data!.data.map((e) => e.id);
    const before = await eventIds();
    expect(before).toContain(delivery!.eventId);
    expect(await deleteExpiredEvents(t.db, 30)).toBe(1);
    const after = await eventIds();
    expect(after).not.toContain(delivery!.eventId);
    expect(after).toEqual(expect.arrayContaining(before.filter((id) => id !== delivery!.eventId)));
    expect(await deliveries(live, hook.id)).toEqual([]);
    expect(jobs.find((job) => job.queue === 'events.cleanup')?.cron).toMatch(/^\d+ \* \* \* \*$/);
  });
});
