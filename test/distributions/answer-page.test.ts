/**
 * The respondent's side over real HTTP: the answer page (personal and embed tokens), the same answer rules as
 * submitResponse with errors next to their question, one answer per link, expiry, unknown tokens, one-click
 * unsubscribe and its effect on later sends, reminders only to those who have not answered.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkKeyOf, personalToken, personalTokenHash } from '../../server/src/modules/distributions/tokens.js';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { validAnswers, validForm } from '../helpers/surveys.js';
import {
  activeSurvey,
  allRecipients,
  insertPeople,
  people,
  startWithSmtp,
  tenant,
  waitForStatus,
  type Client,
  embedUrl,
} from './fixtures.js';
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

const form = (fields: Array<[string, string]>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

async function sendLinks(client: Client, organizationId: string, prefix: string, n = 3) {
  await insertPeople(t, organizationId, people(n, prefix));
  const surveyId = await activeSurvey(client);
  const d = await client.unwrap(
    client.POST('/api/v1/surveys/{surveyId}/distribute', {
      params: { path: { surveyId } },
      body: { targeting: { filters: [] }, distribution: { method: 'link' } },
    }),
  );
  await waitForStatus(client, surveyId, d.id, ['sent']);
  return { surveyId, distributionId: d.id, recipients: await allRecipients(client, surveyId, d.id) };
}

describe('GET and POST /s/{token}', () => {
  it('shows an accessible form, refuses invalid answers next to their question, stores a valid one once', async () => {
    const { live, organizationId } = await tenant(t);
    const { surveyId, distributionId, recipients } = await sendLinks(live, organizationId, 'A');
    const link = recipients[1]!.link;

    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('<meta name="viewport"');
    expect(html).toContain('<legend id="q_1-legend"');
    expect(html).toMatch(/<input type="radio" name="q_1" id="q_1-10" value="10"[^>]*><span>10<\/span>/);
    expect(html).toContain('<label for="q_3-c_1">Office</label>');
    expect(html).not.toContain('<script');

    const invalid = await fetch(
      link,
      form([
        ['q_2', '4'],
        ['q_4', 'c_1'],
        ['q_4', 'c_2'],
        ['q_4', 'c_3'],
        ['q_5', 'x'.repeat(25)],
      ]),
    );
    expect(invalid.status).toBe(400);
    const errorPage = await invalid.text();
    expect(errorPage).toContain('There are 3 problems with your answers');
    expect(errorPage).toMatch(/<p class="error" id="q_1-error">Please answer this question\.<\/p>/);
    expect(errorPage).toMatch(/<p class="error" id="q_4-error">Choose at most 2\.<\/p>/);
    expect(errorPage).toMatch(/<p class="error" id="q_5-error">Use at most 20 characters\.<\/p>/);
    // What was entered is kept.
    expect(errorPage).toMatch(/id="q_2-4" value="4" checked/);

    const ok = await fetch(link, form(validForm));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Your answer has been recorded');
    const responses = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
    );
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ respondentExternalId: 'A-0001', distributionId, answers: validAnswers });

    const again = await fetch(link, form(validForm));
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('accepts one answer');
    expect((await fetch(link)).status).toBe(410);
    const after = await allRecipients(live, surveyId, distributionId);
    expect(after[1]).toMatchObject({ status: 'responded' });
    expect(after[1]!.respondedAt).not.toBeNull();
    const events = await t.db
      .selectFrom('events')
      .select('data')
      .where('organization_id', '=', organizationId)
      .where('type', '=', 'response.submitted')
      .execute();
    expect(events.map((e) => (e.data as { distributionId: string }).distributionId)).toEqual([distributionId]);
  });

  it('answers unknown, malformed, expired and other-tenant tokens with a plain page that reveals nothing', async () => {
    const { live, organizationId } = await tenant(t);
    const { distributionId, recipients } = await sendLinks(live, organizationId, 'B', 1);
    const link = recipients[0]!.link;
    const token = link.split('/s/')[1]!;
    const forged = `${token.slice(0, 27)}${'A'.repeat(43)}`;
    const pages = await Promise.all(
      [`${t.url}/s/${forged}`, `${t.url}/s/not-a-token`, `${t.url}/s/${token.slice(0, 26)}T${token.slice(27)}`].map(
        (u) => fetch(u),
      ),
    );
    const bodies = await Promise.all(pages.map((p) => p.text()));
    expect(pages.map((p) => p.status)).toEqual([404, 404, 404]);
    expect(new Set(bodies).size).toBe(1);
    expect(bodies[0]).toContain('This link is not valid');

    await t.db
      .updateTable('distributions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', distributionId)
      .execute();
    const expired = await fetch(link);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('This link has expired');
    expect((await fetch(link, form(validForm))).status).toBe(410);
  });

  it('a paused survey shows that it is not open; anonymous surveys store no identity', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(1, 'C'));
    const surveyId = await activeSurvey(live, { settings: { anonymous: true } });
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'link' } },
      }),
    );
    await waitForStatus(live, surveyId, d.id, ['sent']);
    const [recipient] = await allRecipients(live, surveyId, d.id);
    await live.POST('/api/v1/surveys/{id}/pause', { params: { path: { id: surveyId } } });
    const paused = await fetch(recipient!.link);
    expect(paused.status).toBe(409);
    expect(await paused.text()).toContain('not accepting answers');
    await live.POST('/api/v1/surveys/{id}/launch', { params: { path: { id: surveyId } } });
    expect((await fetch(recipient!.link, form(validForm))).status).toBe(200);
    const [response] = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
    );
    expect(response).toMatchObject({ respondentExternalId: null, distributionId: d.id });
    // Nothing ties the anonymous answer back to its person: no time on the recipient, no response id stored.
    expect((await allRecipients(live, surveyId, d.id))[0]).toMatchObject({ status: 'responded', respondedAt: null });
    const stored = await sql<{
      response_id: string | null;
      responded_at: Date | null;
    }>`select response_id, responded_at from distribution_recipients where distribution_id = ${d.id}`.execute(t.db);
    expect(stored.rows).toEqual([{ response_id: null, responded_at: null }]);
  });

  it('an embed token accepts one answer per browser (cookie), without identity', async () => {
    const { live } = await tenant(t);
    const surveyId = await activeSurvey(live);
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'embed' } },
      }),
    );
    const done = await waitForStatus(live, surveyId, d.id, ['sent']);
    const url = embedUrl(done);
    const first = await fetch(url, form(validForm));
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toContain('HttpOnly');
    const sameBrowser = await fetch(url, { headers: { cookie: cookie.split(';')[0]! } });
    expect(await sameBrowser.text()).toContain('from this browser has been recorded');
    expect((await fetch(url, form(validForm))).status).toBe(200);
    const responses = await live.unwrap(
      live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
    );
    expect(responses.map((r) => [r.respondentExternalId, r.distributionId])).toEqual([
      [null, d.id],
      [null, d.id],
    ]);
  });
});

describe('tokens', () => {
  it('PostgreSQL and JavaScript derive the same token hash; the stored hash is not the token', async () => {
    const { live, organizationId } = await tenant(t);
    const { distributionId, recipients } = await sendLinks(live, organizationId, 'T', 2);
    const key = await linkKeyOf(t.db, t.service.deps.config.linkSecret);
    const rows = await t.db
      .selectFrom('distribution_recipients')
      .select(['external_id', 'token_hash'])
      .where('distribution_id', '=', distributionId)
      .orderBy('external_id')
      .execute();
    for (const [i, row] of rows.entries()) {
      expect(row.token_hash.equals(personalTokenHash(key, distributionId, row.external_id))).toBe(true);
      const token = personalToken(key, { organizationId, environment: 'LIVE' }, distributionId, row.external_id);
      expect(recipients[i]!.link.endsWith(token)).toBe(true);
      expect(row.token_hash.toString('base64url')).not.toBe(token.slice(27));
    }
  });
});

describe('unsubscribe and reminders', () => {
  it('one-click unsubscribe stops every later e-mail of the organization; reminders go once, only to those who have not answered', async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(4, 'R'));
    const surveyId = await activeSurvey(live);
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: {
          targeting: { filters: [] },
          distribution: { method: 'email', reminder: { enabled: true, afterDays: 2 } },
        },
      }),
    );
    const sent = await waitForStatus(live, surveyId, d.id, ['sent']);
    expect(sent.sentCount).toBe(4);
    await smtp.settled();
    const mails = (address: string) => smtp.received.filter((m) => m.envelopeTo.includes(address));
    const linkOf = (address: string) => mails(address)[0]!.text.match(/http\S+\/s\/\S+/)![0];
    const unsubscribeOf = (address: string) => mails(address)[0]!.headers['list-unsubscribe']!.slice(1, -1);

    // r0 answers; r1 unsubscribes with the one-click POST of RFC 8058.
    expect((await fetch(linkOf('r0@example.com'), form(validForm))).status).toBe(200);
    const confirm = await fetch(unsubscribeOf('r1@example.com'));
    expect(await confirm.text()).toContain('r1@example.com');
    const oneClick = await fetch(unsubscribeOf('r1@example.com'), form([['List-Unsubscribe', 'One-Click']]));
    expect(oneClick.status).toBe(200);
    expect(await oneClick.text()).toContain('You have unsubscribed');
    expect((await fetch(linkOf('r1@example.com'))).status).toBe(410);
    // r2 answers through the API instead of the link: the response answers this distribution, which reached r2.
    const viaApi = await live.unwrap(
      live.POST('/api/v1/surveys/{id}/responses', {
        params: { path: { id: surveyId } },
        body: { answers: validAnswers, respondentExternalId: 'R-0002' },
      }),
    );
    expect(viaApi.distributionId).toBe(d.id);

    // The reminder is due in 2 days: bring its job forward.
    const due = await sql`update pgboss.job set start_after = now()
      where name = 'distributions.send' and state = 'created' and data->>'kind' = 'remind' and data->>'distributionId' = ${d.id}`.execute(
      t.db,
    );
    expect(Number(due.numAffectedRows)).toBe(1);
    await eventually(
      async () =>
        (
          await live.unwrap(
            live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
              params: { path: { surveyId, distributionId: d.id } },
            }),
          )
        ).reminderSentAt !== null,
      20_000,
      'the reminder',
      200,
    );
    await smtp.settled();
    const reminders = smtp.received.filter((m) => m.subject?.startsWith('Reminder:'));
    expect(reminders.map((m) => m.envelopeTo[0])).toEqual(['r3@example.com']);
    const recipients = await allRecipients(live, surveyId, d.id);
    expect(recipients.map((r) => [r.respondentExternalId, r.status, r.reminderSentAt !== null])).toEqual([
      ['R-0000', 'responded', false],
      ['R-0001', 'sent', false],
      ['R-0002', 'responded', false],
      ['R-0003', 'sent', true],
    ]);

    // A later distribution never mails r1.
    const next = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'email' } },
      }),
    );
    expect(await waitForStatus(live, surveyId, next.id, ['sent'])).toMatchObject({
      matchedCount: 4,
      sentCount: 3,
      unsubscribedCount: 1,
    });
    await smtp.settled();
    expect(mails('r1@example.com')).toHaveLength(1);
    expect((await allRecipients(live, surveyId, next.id))[1]!.status).toBe('unsubscribed');
  });
});
