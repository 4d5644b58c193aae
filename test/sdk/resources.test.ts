/**
 * The SDK's generated resource methods against the real service: one method per operation of the document,
 * typed results (the envelope's `data`), typed errors, iterators across pages, job wait helpers, and
 * `constructEvent` whose result narrows on `type`.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createClient,
  NotFoundError,
  RateLimitError,
  signWebhook,
  TimeoutError,
  ValidationError,
  type AnalyticsFilter,
  type RetryEvent,
  type Survey,
  type SyncRecord,
  type WebhookEvent,
  type webhooks,
} from '@survey-service/sdk';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { methodNames, resourcesSource } from '../../scripts/generate-sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { surveyBody, tenantWithRaisedLimits, validAnswers } from '../helpers/surveys.js';

const bundle = JSON.parse(readFileSync('openapi/bundled/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};

let t: TestService;
let live: Awaited<ReturnType<typeof tenantWithRaisedLimits>>['live'];
beforeAll(async () => {
  t = await startTestService();
  ({ live } = await tenantWithRaisedLimits(t));
});
afterAll(async () => {
  await t?.close();
});

describe('generated resource methods', () => {
  it('exist for every operation of the document, at the place the naming table gives, and are current', () => {
    const operationIds = Object.values(bundle.paths).flatMap((item) =>
      Object.values(item)
        .map((op) => op.operationId)
        .filter((id): id is string => !!id),
    );
    expect(operationIds.length).toBeGreaterThanOrEqual(48);
    for (const operationId of operationIds) {
      const place = methodNames[operationId];
      expect(place, operationId).toBeDefined();
      const method = place!.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], live);
      expect(typeof method, `client.${place}`).toBe('function');
    }
    expect(readFileSync('sdk/src/generated/resources.ts', 'utf8')).toBe(resourcesSource(bundle));
  });

  it('resolve to the data, typed, and iterate every page of a list', async () => {
    const created: Survey[] = [];
    for (let i = 0; i < 5; i++) created.push(await live.surveys.create(surveyBody({ title: `Resource ${i}` })));
    expectTypeOf(created[0]!).toEqualTypeOf<Survey>();
    const one = await live.surveys.get(created[0]!.id);
    expect(one.title).toBe('Resource 0');
    const page = await live.surveys.list({ pageSize: 2 });
    expect(page).toHaveLength(2);
    const seen: string[] = [];
    for await (const survey of live.surveys.listAll({ pageSize: 2, search: 'Resource' })) seen.push(survey.id);
    expect(seen.sort()).toEqual(created.map((s) => s.id).sort());

    const launched = await live.surveys.launch(created[0]!.id);
    expect(launched.status).toBe('active');
    const response = await live.responses.submit(created[0]!.id, { answers: validAnswers });
    expect(response.surveyId).toBe(created[0]!.id);
    const responses = await live.responses.list(created[0]!.id);
    expect(responses.map((r) => r.id)).toEqual([response.id]);
    expect((await live.surveys.update(created[1]!.id, { title: 'Renamed' })).title).toBe('Renamed');
    expect((await live.account.me()).environment).toBe('LIVE');
  });

  it('throw the typed error and never retry a client error', async () => {
    await expect(live.surveys.get('srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8')).rejects.toBeInstanceOf(NotFoundError);
    const refused = await live.surveys.create({ title: '', questions: [] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
  });

  it('honour a per-call AbortSignal and send the caller’s Idempotency-Key (a replay answers the same survey)', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(live.surveys.list(undefined, { signal: controller.signal })).rejects.toThrow('stop');
    const key = `idem-${Date.now()}`;
    const first = await live.surveys.create(surveyBody({ title: 'Once' }), { idempotencyKey: key });
    const again = await live.surveys.create(surveyBody({ title: 'Once' }), { idempotencyKey: key });
    expect(again.id).toBe(first.id);
  });

  it('give up after a per-call timeoutMs with the SDK’s TimeoutError', async () => {
    // A server that never answers.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const client = createClient({
        apiKey: `svc_test_${'0'.repeat(64)}`,
        baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        retry: { maxRetries: 0 },
      });
      const started = Date.now();
      await expect(client.surveys.list(undefined, { timeoutMs: 300 })).rejects.toBeInstanceOf(TimeoutError);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('wait for jobs: a sync, an export (then streamed to disk) and an AI analysis', async () => {
    const accepted = await live.respondents.sync({
      mode: 'upsert',
      respondents: [{ externalId: 'E-1', email: 'e1@example.com', department: 'Sales' }],
    });
    const job = await live.respondents.waitForSync(accepted.jobId, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(job.status).toBe('completed');

    const survey = await live.surveys.create(surveyBody({ title: 'Exported' }));
    await live.surveys.launch(survey.id);
    const submitted = await live.responses.submit(survey.id, { answers: validAnswers });
    // Read your writes: the response acknowledged a moment ago is in the export requested now.
    const started = await live.exports.create(survey.id, { format: 'csv' });
    const done = await live.exports.wait(started.id, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sdk-export-')), 'responses.csv');
    const bytes = await live.exports.downloadToFile(done, file);
    expect(bytes).toBe(done.size);
    expect(readFileSync(file, 'utf8')).toContain(submitted.id);

    const analysis = await live.analytics.ai.generate(survey.id, {});
    const analysed = await live.analytics.ai.wait(survey.id, analysis.id, { initialDelayMs: 50, timeoutMs: 60_000 });
    expect(['completed', 'failed']).toContain(analysed.status);
  });
});

describe('constructEvent', () => {
  it('verifies a delivery and returns an event that narrows on type', async () => {
    const survey = await live.surveys.create(surveyBody({ title: 'Evented' }));
    await live.surveys.launch(survey.id);
    const events = await live.events.list({ type: 'survey.launched' });
    const stored = events.find((e) => e.type === 'survey.launched' && (e.data as Survey).id === survey.id)!;
    const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
    const payload = JSON.stringify(stored);
    const event = live.webhooks.constructEvent(payload, signWebhook(payload, secret, { id: stored.id }), secret);
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    // One member per event of the document's `webhooks` section, each narrowing to its own name.
    expectTypeOf<WebhookEvent['type']>().toEqualTypeOf<keyof webhooks>();
    expectTypeOf<Extract<WebhookEvent, { type: 'survey.paused' }>['type']>().toEqualTypeOf<'survey.paused'>();
    switch (event.type) {
      case 'survey.launched':
        expectTypeOf(event.data).toEqualTypeOf<Survey>();
        expect(event.data.status).toBe('active');
        break;
      default:
        throw new Error(`unexpected ${event.type}`);
    }
    expect(() =>
      live.webhooks.constructEvent(`${payload} `, signWebhook(payload, secret, { id: stored.id }), secret),
    ).toThrow();
  });
});

describe('typed inputs and visible retries, against the service', () => {
  it('sync typed records, then narrow analytics by a filters object (sent as JSON) like by its JSON text', async () => {
    const { live: client } = await tenantWithRaisedLimits(t);
    const records: SyncRecord[] = Array.from({ length: 8 }, (_, i) => ({
      externalId: `F-${i}`,
      email: `f${i}@example.com`,
      department: i < 5 ? 'Sales' : 'Ops',
      attributes: { team: i % 2 ? 'odd' : 'even' },
    }));
    const accepted = await client.respondents.sync({ mode: 'upsert', respondents: records });
    const job = await client.respondents.waitForSync(accepted.jobId, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(job).toMatchObject({ status: 'completed', stats: { created: 8, errors: 0 } });

    const survey = await client.surveys.create(surveyBody({ title: 'Filtered' }));
    await client.surveys.launch(survey.id);
    for (const record of records)
      await client.responses.submit(survey.id, { respondentExternalId: record.externalId, answers: validAnswers });

    const sales = { filters: [{ field: 'department', operator: 'equals', value: 'Sales' }] } as const;
    // Only the five of Sales: the object reached the service as the filter (unfiltered would count eight).
    const byObject = await client.analytics.static(survey.id, { filters: sales });
    expect(byObject).toMatchObject({ suppressed: false, responseCount: 5 });
    const byText = await client.analytics.static(survey.id, { filters: JSON.stringify(sales) });
    expect(byText.responseCount).toBe(5);
    const smart = await client.analytics.smart(survey.id, { filters: { ...sales, logic: 'AND' } });
    expect(smart.surveyId).toBe(survey.id);

    // The service validates the serialized object: its problems are reported under /query/filters.
    const under = { field: 'managerId', operator: 'under', value: 'F-0' } as unknown as AnalyticsFilter;
    const refused = await client.analytics
      .static(survey.id, { filters: { filters: [under] } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).details.map((d) => d.path)).toContain('/query/filters/filters/0/operator');
  });

  it('report a real 429 of the minute window to retry.onRetry, and give it as the cause of the TimeoutError', async () => {
    const { organizationId, liveKey } = await t.createTenant();
    await t.db
      .updateTable('organizations')
      .set({ rate_limit_per_minute: 1 })
      .where('id', '=', organizationId)
      .execute();
    const events: RetryEvent[] = [];
    const client = createClient({ apiKey: liveKey, baseUrl: t.url, retry: { onRetry: (e) => events.push(e) } });
    await client.account.me(); // spends the minute: its window starts now, so the next call waits about 60 s

    const error = await client.surveys.list(undefined, { timeoutMs: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    const cause = (error as TimeoutError).cause;
    expect(cause).toBeInstanceOf(RateLimitError);
    expect(cause).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((cause as RateLimitError).retryAfter).toBeGreaterThan(30);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ attempt: 1, method: 'GET', response: { status: 429 } });
    expect(events[0]!.error).toBe(cause);
    expect(events[0]!.delayMs).toBe((cause as RateLimitError).retryAfter! * 1000);

    // Throwing from onRetry ends the call at once with the 429, instead of a wait of minutes.
    const impatient = createClient({
      apiKey: liveKey,
      baseUrl: t.url,
      retry: {
        onRetry: ({ delayMs, error: why }) => {
          if (delayMs > 5_000) throw why;
        },
      },
    });
    const started = Date.now();
    await expect(impatient.surveys.list()).rejects.toBeInstanceOf(RateLimitError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuse a baseUrl ending in /api/v1 at construction, where the same URL without it works', async () => {
    const { liveKey } = await tenantWithRaisedLimits(t);
    for (const baseUrl of [`${t.url}/api/v1`, `${t.url}/api/v1/`])
      expect(() => createClient({ apiKey: liveKey, baseUrl })).toThrow(
        `createClient: baseUrl must not include /api/v1 (the SDK adds it to every path): use '${t.url}'`,
      );
    expect((await createClient({ apiKey: liveKey, baseUrl: `${t.url}/` }).account.me()).environment).toBe('LIVE');
  });
});
