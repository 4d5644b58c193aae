/**
 * Distributions end to end through the SDK, a real SMTP server and real PostgreSQL: preview (scopes, rules),
 * e-mail sends with their headers and per-recipient outcomes, the frozen audience, the event, link and embed,
 * schedules, holds and cancellations, the empty audience, listing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import {
  activeSurvey,
  allRecipients,
  getDistribution,
  insertPeople,
  people,
  tenant,
  waitForStatus,
  type Client,
  embedUrl,
} from './fixtures.js';
import { startWithSmtp } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

let t: TestService;
let smtp: TestSmtp;
beforeAll(async () => {
  ({ t, smtp } = await startWithSmtp());
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const path = (surveyId: string) => ({ params: { path: { surveyId } } });
const byDepartment = (department: string) => ({
  filters: [{ field: 'department', operator: 'equals' as const, value: department }],
  logic: 'AND' as const,
});
const mailTo = (address: string) => smtp.received.filter((m) => m.envelopeTo.includes(address));

describe('previewDistribution', () => {
  it('counts and samples with the same rules as the send, and needs respondents:read too', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(30));
    const surveyId = await activeSurvey(live);
    const preview = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
        ...path(surveyId),
        body: {
          targeting: {
            filters: [
              { field: 'department', operator: 'in', value: ['Sales'] },
              { field: 'attributes.remote', operator: 'equals', value: true },
            ],
            logic: 'AND',
          },
        },
      }),
    );
    // Sales: i % 3 == 1; remote: i % 5 == 0 → i in {10, 25}.
    expect(preview.matchedCount).toBe(2);
    expect(preview.sample.map((s) => s.externalId)).toEqual(['E-0010', 'E-0025']);

    const launchOnly = t.client((await t.createKey(organizationId, { scopes: ['surveys:launch'] })).key);
    const refused = await launchOnly.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      ...path(surveyId),
      body: { targeting: { filters: [] } },
    });
    expect(refused.response.status).toBe(403);
    expect(refused.error?.error.code).toBe('insufficient_scope');
    expect(refused.error?.error.details?.[0]?.message).toContain('respondents:read');
    // Both scopes are in the operation's security, checked by the one scope check; every missing one is named.
    const neither = t.client((await t.createKey(organizationId, { scopes: ['surveys:read'] })).key);
    const both = await neither.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      ...path(surveyId),
      body: { targeting: { filters: [] } },
    });
    expect(both.response.status).toBe(403);
    expect(both.error?.error.details?.map((d) => d.message).join(' ')).toMatch(/surveys:launch.*respondents:read/);
  });

  it('names a filter that does not fit by its index (400)', async () => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const bad = await live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      ...path(surveyId),
      body: {
        targeting: {
          filters: [
            { field: 'department', operator: 'equals', value: 'Sales' },
            { field: 'hireDate', operator: 'contains', value: '2020' },
            { field: 'location', operator: 'in', value: 'Berlin' },
          ],
        },
      },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error.details?.map((d) => [d.path, d.message.slice(0, 9)])).toEqual([
      ['/body/targeting/filters/1/operator', 'filter 1:'],
      ['/body/targeting/filters/2/value', 'filter 2:'],
    ]);
    const unknown = await live.POST('/api/v1/surveys/{surveyId}/distribute/preview', {
      params: { path: { surveyId: 'srv_00000000000000000000000000' } },
      body: { targeting: { filters: [] } },
    });
    expect(unknown.response.status).toBe(404);
  });
});

describe('distributeSurvey by e-mail', () => {
  let live: Client;
  let organizationId: string;
  let surveyId: string;
  let distributionId: string;
  beforeAll(async () => {
    ({ live, organizationId } = await tenant(t));
    const records = people(12);
    records[4] = { ...records[4]!, email: 'bounce-4@example.com' };
    records[7] = { ...records[7]!, email: 'defer-7@example.com' };
    await insertPeople(t, organizationId, records);
    surveyId = await activeSurvey(live);
    const accepted = await live.POST('/api/v1/surveys/{surveyId}/distribute', {
      ...path(surveyId),
      body: {
        targeting: byDepartment('Sales'),
        distribution: { method: 'email', subject: 'Pulse check', message: 'Tell us how it goes.' },
      },
    });
    expect(accepted.response.status).toBe(202);
    expect(accepted.data?.data).toMatchObject({
      status: 'scheduled',
      method: 'email',
      matchedCount: null,
      sentCount: 0,
      linkExpiresInDays: 60,
      subject: 'Pulse check',
    });
    distributionId = accepted.data!.data.id;
  });

  it('sends each matched recipient one message with a personal link, text and HTML, and one-click unsubscribe', async () => {
    const done = await waitForStatus(live, surveyId, distributionId, ['sent'], 30_000);
    await smtp.settled();
    // Sales: E-0001, E-0004 (bounces), E-0007 (deferred 3×, fails), E-0010.
    expect(done).toMatchObject({ matchedCount: 4, sentCount: 2, failedCount: 2, unsubscribedCount: 0 });
    expect(done.completedAt).not.toBeNull();
    for (const address of ['e1@example.com', 'e10@example.com']) {
      const mails = mailTo(address);
      expect(mails).toHaveLength(1);
      const mail = mails[0]!;
      expect(mail.subject).toBe('Pulse check');
      expect(mail.text).toContain('Tell us how it goes.');
      expect(mail.text).toMatch(new RegExp(`${t.url}/s/[0-9A-Z]{26}L[A-Za-z0-9_-]{43}`));
      expect(mail.html).toContain('Answer the survey');
      expect(mail.headers['list-unsubscribe']).toMatch(new RegExp(`^<${t.url}/u/[0-9A-Z]{26}L[A-Za-z0-9_-]{43}>$`));
      expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      expect(mail.messageId).toContain(distributionId);
    }
    expect(mailTo('e0@example.com')).toHaveLength(0);
    expect(smtp.refusals.get('defer-7@example.com')).toBe(3);
  });

  it('lists recipients with status, error, link and the audience as frozen at the send', async () => {
    // A later change to a respondent does not touch the frozen audience (the contract's `snapshot` member).
    await live.PUT('/api/v1/respondents/{externalId}', {
      params: { path: { externalId: 'E-0001' } },
      body: { email: 'e1@example.com', department: 'Marketing' },
    });
    const recipients = await allRecipients(live, surveyId, distributionId);
    expect(recipients.map((r) => [r.respondentExternalId, r.status])).toEqual([
      ['E-0001', 'sent'],
      ['E-0004', 'bounced'],
      ['E-0007', 'failed'],
      ['E-0010', 'sent'],
    ]);
    const [first, bounced, failed] = recipients;
    expect(first!.snapshot).toMatchObject({
      department: 'Sales',
      location: 'London',
      hireDate: '2021-03-15',
      attributes: { remote: false, level: 1 },
    });
    expect(first!.sentAt).not.toBeNull();
    expect(first!.link).toBe(mailTo('e1@example.com')[0]!.text.match(/http\S+\/s\/\S+/)![0]);
    expect(bounced!.error).toContain('550');
    expect(failed!.error).toContain('451');
    const onlyFailed = await live.unwrap(
      live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}/recipients', {
        params: { path: { surveyId, distributionId }, query: { status: 'failed' } },
      }),
    );
    expect(onlyFailed.map((r) => r.respondentExternalId)).toEqual(['E-0007']);
  });

  it('records distribution.sent in the event log once, with the final counts', async () => {
    const events = await t.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('organization_id', '=', organizationId)
      .where('type', '=', 'distribution.sent')
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      id: distributionId,
      status: 'sent',
      sentCount: 2,
      failedCount: 2,
      matchedCount: 4,
    });
  });

  it('lists the survey’s distributions newest first; other surveys’ and malformed ids are 404', async () => {
    const second = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        ...path(surveyId),
        body: { targeting: byDepartment('Nobody'), distribution: { method: 'link' } },
      }),
    );
    const listed = await live.GET('/api/v1/surveys/{surveyId}/distributions', path(surveyId));
    expect(listed.data?.data.map((d) => d.id)).toEqual([second.id, distributionId]);
    expect(listed.data?.pagination.totalItems).toBe(2);
    const otherSurvey = await activeSurvey(live);
    expect(
      (
        await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
          params: { path: { surveyId: otherSurvey, distributionId } },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
          params: { path: { surveyId, distributionId: 'dst_nope' } },
        })
      ).response.status,
    ).toBe(404);
    // The empty audience is a distribution with nobody in it, not an error.
    expect(await waitForStatus(live, surveyId, second.id, ['sent'])).toMatchObject({ matchedCount: 0, sentCount: 0 });
  });
});

describe('states and schedules', () => {
  it('refuses a closed survey, and a draft without a future schedule (409)', async () => {
    const { live } = await tenant(t);
    const draft = await live.unwrap(
      live.POST('/api/v1/surveys', { body: { title: 'Draft', questions: [{ type: 'nps', text: 'Recommend us?' }] } }),
    );
    const now = await live.POST('/api/v1/surveys/{surveyId}/distribute', {
      ...path(draft.id),
      body: { targeting: { filters: [] }, distribution: { method: 'link' } },
    });
    expect(now.response.status).toBe(409);
    expect(now.error?.error.code).toBe('invalid_state');
    const closed = await activeSurvey(live);
    await live.POST('/api/v1/surveys/{id}/close', { params: { path: { id: closed } } });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      (
        await live.POST('/api/v1/surveys/{surveyId}/distribute', {
          ...path(closed),
          body: { targeting: { filters: [] }, distribution: { method: 'link', schedule: later } },
        })
      ).response.status,
    ).toBe(409);
    const reminderOnLink = await live.POST('/api/v1/surveys/{surveyId}/distribute', {
      ...path(draft.id),
      body: {
        targeting: { filters: [] },
        distribution: { method: 'link', schedule: later, reminder: { enabled: true } },
      },
    });
    expect(reminderOnLink.response.status).toBe(400);
    expect(reminderOnLink.error?.error.details?.[0]?.path).toBe('/body/distribution/reminder/enabled');
  });

  it('a scheduled send waits for its time; a draft launched by then is sent, a paused one is held until resumed', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(3, 'S'));
    const draft = await live.unwrap(
      live.POST('/api/v1/surveys', { body: { title: 'Later', questions: [{ type: 'nps', text: 'Recommend us?' }] } }),
    );
    const at = new Date(Date.now() + 2_500).toISOString();
    const scheduled = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        ...path(draft.id),
        body: { targeting: { filters: [] }, distribution: { method: 'link', schedule: at } },
      }),
    );
    expect(scheduled).toMatchObject({ status: 'scheduled', schedule: at });
    expect((await getDistribution(live, draft.id, scheduled.id)).status).toBe('scheduled');
    // Not launched at the send time: held.
    expect((await waitForStatus(live, draft.id, scheduled.id, ['held'], 15_000)).matchedCount).toBeNull();
    await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: draft.id } } });
    expect(await waitForStatus(live, draft.id, scheduled.id, ['sent'], 15_000)).toMatchObject({
      matchedCount: 3,
      sentCount: 3,
    });
  });

  it('a send whose survey was closed by then is cancelled', async () => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const at = new Date(Date.now() + 1_500).toISOString();
    const scheduled = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        ...path(surveyId),
        body: { targeting: { filters: [] }, distribution: { method: 'email', schedule: at } },
      }),
    );
    await live.POST('/api/v1/surveys/{id}/close', { params: { path: { id: surveyId } } });
    expect(await waitForStatus(live, surveyId, scheduled.id, ['cancelled'], 15_000)).toMatchObject({
      matchedCount: null,
      sentCount: 0,
    });
  });
});

describe('link and embed', () => {
  it('link: personal links for everyone matched, no e-mail, expiry from linkExpiresInDays', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(6, 'L'));
    const surveyId = await activeSurvey(live);
    const before = smtp.received.length;
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        ...path(surveyId),
        body: { targeting: byDepartment('Engineering'), distribution: { method: 'link', linkExpiresInDays: 7 } },
      }),
    );
    const done = await waitForStatus(live, surveyId, d.id, ['sent']);
    expect(done).toMatchObject({ matchedCount: 2, sentCount: 2, embedCode: null, linkExpiresInDays: 7 });
    const recipients = await allRecipients(live, surveyId, d.id);
    expect(recipients.map((r) => r.status)).toEqual(['sent', 'sent']);
    expect(new Set(recipients.map((r) => r.link)).size).toBe(2);
    const days = (Date.parse(recipients[0]!.expiresAt) - Date.parse(recipients[0]!.sentAt!)) / 86_400_000;
    expect(days).toBeCloseTo(7, 2);
    expect(smtp.received.length).toBe(before);
  });

  it('embed: an iframe snippet of the answer page with its own token', async () => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        ...path(surveyId),
        body: { targeting: { filters: [] }, distribution: { method: 'embed' } },
      }),
    );
    expect(d.embedCode).toBeNull();
    const done = await waitForStatus(live, surveyId, d.id, ['sent']);
    expect(done.embedCode).toMatch(
      new RegExp(`^<iframe src="${t.url}/s/[0-9A-Z]{26}L[A-Za-z0-9_-]{43}" title="Survey"`),
    );
    const page = await fetch(embedUrl(done));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post"');
  });
});
