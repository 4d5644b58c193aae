/**
 * People without an e-mail address, across features: stored by PUT and by sync (absent or `null`), read back as
 * `null`, found by targeting on their other fields and never by an e-mail filter, skipped by an e-mail distribution
 * with recipient status `no_email` (counted on the distribution, in the event too), and given a working personal
 * link by a link distribution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeSurvey,
  allRecipients,
  startWithSmtp,
  tenant,
  waitForStatus,
  type Client,
} from '../distributions/fixtures.js';
import type { TestSmtp } from '../distributions/smtp.js';
import type { TestService } from '../helpers/service.js';
import { sync } from './fixtures.js';

let t: TestService;
let smtp: TestSmtp;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const floor = (department: string) => ({
  filters: [{ field: 'department', operator: 'equals' as const, value: department }],
  logic: 'AND' as const,
});

async function put(client: Client, externalId: string, body: Record<string, unknown>) {
  return client.PUT('/api/v1/respondents/{externalId}', { params: { path: { externalId } }, body: body as never });
}

async function distribute(client: Client, surveyId: string, method: 'email' | 'link') {
  const accepted = await client.unwrap(
    client.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: floor('Plant'), distribution: { method } },
    }),
  );
  return waitForStatus(client, surveyId, accepted.id, ['sent', 'failed']);
}

describe('people without e-mail', () => {
  let live: Client;
  beforeAll(async () => {
    ({ live } = await tenant(t));
    // Two on the plant floor without an address (one absent, one null), one with; one office person.
    expect((await put(live, 'P-1', { firstName: 'Ana', department: 'Plant' })).response.status).toBe(201);
    expect((await put(live, 'P-2', { email: null, firstName: 'Ben', department: 'Plant' })).response.status).toBe(201);
    const { job } = await sync(live, 'upsert', [
      { externalId: 'P-3', email: 'cleo@example.com', firstName: 'Cleo', department: 'Plant' },
      { externalId: 'P-4', firstName: 'Dev', department: 'Plant' },
      { externalId: 'O-1', email: 'olu@example.com', department: 'Office' },
    ]);
    expect(job).toMatchObject({ status: 'completed', stats: { created: 3, errors: 0 } });
  });

  it('are stored and read back with email null, by PUT and by sync, and lose an address by a PUT without one', async () => {
    for (const id of ['P-1', 'P-2', 'P-4']) {
      const read = await live.unwrap(
        live.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: id } } }),
      );
      expect(read.email).toBeNull();
    }
    expect((await put(live, 'P-5', { email: 'erin@example.com', department: 'Office' })).response.status).toBe(201);
    expect((await put(live, 'P-5', { department: 'Office' })).response.status).toBe(200);
    const read = await live.unwrap(
      live.GET('/api/v1/respondents/{externalId}', { params: { path: { externalId: 'P-5' } } }),
    );
    expect(read.email).toBeNull();
    // An address must still be one: an empty string or a number is refused, not coerced.
    for (const email of ['', 42, 'not-an-address']) {
      const refused = await put(live, 'P-6', { email });
      expect(refused.response.status).toBe(400);
    }
  });

  it('are matched by targeting on other fields, never by an e-mail filter, and shown in the preview', async () => {
    const surveyId = await activeSurvey(live);
    const preview = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
        params: { path: { surveyId } },
        body: { targeting: floor('Plant') },
      }),
    );
    expect(preview.matchedCount).toBe(4);
    expect(preview.sample.filter((s) => s.email === null).map((s) => s.externalId)).toEqual(['P-1', 'P-2', 'P-4']);
    const targeted = async (filters: unknown[]) =>
      live.unwrap(
        live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
          params: { path: { surveyId } },
          body: { targeting: { filters: filters as never, logic: 'AND' } },
        }),
      );
    // An e-mail filter never matches a missing address; `exists: false` finds exactly the people without one.
    const withAt = await targeted([{ field: 'email', operator: 'contains', value: '@' }]);
    expect(withAt.sample.map((s) => s.externalId).sort()).toEqual(['O-1', 'P-3']);
    const without = await targeted([{ field: 'email', operator: 'exists', value: false }]);
    expect(without.sample.map((s) => s.externalId)).toEqual(['P-1', 'P-2', 'P-4', 'P-5']);
  });

  it('are skipped by an e-mail distribution with status no_email, counted, and never mailed', async () => {
    const surveyId = await activeSurvey(live);
    const before = smtp.received.length;
    const sent = await distribute(live, surveyId, 'email');
    expect(sent).toMatchObject({ status: 'sent', matchedCount: 4, sentCount: 1, noEmailCount: 3, failedCount: 0 });
    const recipients = await allRecipients(live, surveyId, sent.id);
    const byId = Object.fromEntries(recipients.map((r) => [r.respondentExternalId, r]));
    expect(byId['P-3']).toMatchObject({ status: 'sent', email: 'cleo@example.com' });
    for (const id of ['P-1', 'P-2', 'P-4'])
      expect(byId[id]).toMatchObject({ status: 'no_email', email: null, sentAt: null });
    // The recipients list filters by the reason too, so the people to reach another way are one call away.
    const skipped = await live.unwrap(
      live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
        params: { path: { surveyId, distributionId: sent.id }, query: { status: 'no_email' } },
      }),
    );
    expect(skipped.map((r) => r.respondentExternalId)).toEqual(['P-1', 'P-2', 'P-4']);
    expect(smtp.received.length - before).toBe(1);
    expect(smtp.received.at(-1)!.envelopeTo).toEqual(['cleo@example.com']);
    // The event carries the same counts as the distribution.
    const events = await live.unwrap(live.GET('/api/v1/events', { params: { query: { type: 'distribution.sent' } } }));
    const event = events.find((e) => (e.data as { id: string }).id === sent.id);
    expect(event?.data).toMatchObject({ noEmailCount: 3, sentCount: 1 });
  });

  it('get a working personal link from a link distribution', async () => {
    const surveyId = await activeSurvey(live);
    const sent = await distribute(live, surveyId, 'link');
    expect(sent).toMatchObject({ status: 'sent', matchedCount: 4, sentCount: 4, noEmailCount: 0 });
    const recipients = await allRecipients(live, surveyId, sent.id);
    const ana = recipients.find((r) => r.respondentExternalId === 'P-1')!;
    expect(ana).toMatchObject({ status: 'sent', email: null });
    const page = await fetch(ana.link);
    expect(page.status).toBe(200);
    // Nothing to unsubscribe without an address.
    const unsubscribe = await fetch(ana.link.replace('/s/', '/u/'));
    expect(unsubscribe.status).toBe(404);
  });
});
