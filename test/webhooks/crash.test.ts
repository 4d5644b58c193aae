/**
 * Crash safety and several workers. The in-process service only serves the API (`role: 'api'`); dispatchers run
 * in worker processes. A worker is SIGKILLed in the middle of a delivery burst: after a new worker starts, every
 * event reaches every subscribed receiver at least once (duplicates carry the same `webhook-id`). Then two
 * workers share a burst without sending anything twice. Workers run with a 2 s timeout, so a dead worker's
 * leases (timeout + 5 s) run out in 7 s.
 */
import type { components } from '@survey-service/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';
import { eventually } from '../helpers/eventually.js';
import { slow, startReceiver, type Receiver } from './receiver.js';

type Client = Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];

let t: TestService;
let live: Client;
let receiver: Receiver;
const workers: ServiceProcess[] = [];
const paths = ['/a', '/b', '/c'];

beforeAll(async () => {
  t = await startTestService({ role: 'api' });
  ({ live } = await tenantWithRaisedLimits(t));
  receiver = await startReceiver();
  // Slow enough that a burst is still in flight when the worker dies.
  for (const path of paths) receiver.on(path, slow(100));
});
afterAll(async () => {
  for (const worker of workers) await worker.stop('SIGKILL');
  await t?.close();
  await receiver?.close();
});

const startWorker = async () => {
  const worker = await startServiceProcess({
    databaseUrl: t.database.url,
    role: 'worker',
    env: { WEBHOOK_TIMEOUT_MS: '2000' },
  });
  workers.push(worker);
  return worker;
};

async function burst(surveyId: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { response } = await live.POST('/api/v1/surveys/{id}/responses', {
      params: { path: { id: surveyId } },
      body: { respondentExternalId: `${prefix}-${i}`, answers: validAnswers },
    });
    expect(response.status).toBe(201);
  }
}

/** Unique webhook-ids received per path. */
const uniqueIds = (path: string) => new Set(receiver.received(path).map((r) => String(r.headers['webhook-id'])));

it(
  'a SIGKILLed worker loses no delivery; two workers share a burst without double sending',
  { timeout: 120_000 },
  async () => {
    for (const path of paths) {
      const { response } = await live.POST('/api/v1/webhooks', {
        body: {
          url: receiver.url(path),
          events: ['response.submitted'] as components['schemas']['WebhookCreate']['events'],
        },
      });
      expect(response.status).toBe(201);
    }
    const { data } = await live.POST('/api/v1/surveys', {
      body: { ...surveyBody(), settings: { allowMultipleResponses: true } },
    });
    const surveyId = data!.data.id;
    await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });

    // Events committed while no worker runs: they wait in the queue.
    await burst(surveyId, 'crash', 120);
    const first = await startWorker();
    await eventually(async () => (receiver.received().length >= 40 ? true : undefined), 30_000, 'the burst to start');
    first.child.kill('SIGKILL');
    await first.exited;
    const beforeRestart = receiver.received().length;
    expect(beforeRestart).toBeLessThan(360);

    await startWorker();
    for (const path of paths)
      await eventually(
        async () => (uniqueIds(path).size === 120 ? true : undefined),
        60_000,
        `all 120 events at ${path}`,
      );
    // Every delivery recorded as succeeded, each as its first attempt (the killed worker's were taken up again).
    const states = await eventually(
      async () => {
        const rows = await t.db.selectFrom('webhook_deliveries').select(['status', 'attempt']).execute();
        return rows.every((row) => row.status === 'succeeded') ? rows : undefined;
      },
      15_000,
      'every delivery recorded',
    );
    expect(states).toHaveLength(360);
    expect(states.every((row) => row.attempt === 1)).toBe(true);
    // At-least-once: anything received twice is the same event (same webhook-id), never a different body.
    const seen = new Map<string, string>();
    for (const r of receiver.received()) {
      const key = `${r.path} ${String(r.headers['webhook-id'])}`;
      if (seen.has(key)) expect(r.body).toBe(seen.get(key));
      seen.set(key, r.body);
    }

    // Two workers at once, no crash: every delivery exactly once.
    await startWorker();
    const received = receiver.received().length;
    await burst(surveyId, 'shared', 100);
    for (const path of paths)
      await eventually(
        async () => (uniqueIds(path).size === 220 ? true : undefined),
        30_000,
        `all 220 events at ${path}`,
      );
    // Every delivery recorded (none pending): a request is sent only for a pending row its worker claimed, and it
    // arrives before the worker records it, so no request of the burst is still to come.
    const recorded = await eventually(
      async () => {
        const rows = await t.db.selectFrom('webhook_deliveries').select(['status']).execute();
        return rows.every((row) => row.status === 'succeeded') && rows;
      },
      15_000,
      'every delivery of the shared burst recorded',
    );
    expect(recorded).toHaveLength(660);
    expect(receiver.received().length - received).toBe(300);
  },
);
