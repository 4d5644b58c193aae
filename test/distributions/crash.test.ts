/**
 * Exactly once across SIGKILL: the worker runs in a child process and is killed in the middle of an e-mail
 * send; a new worker resumes. Checked at the SMTP server: every recipient received the message, one distinct
 * message each (one Message-ID); copies beyond the first can only be the few messages that were in flight at
 * the kill (the mail server had them, the worker had not written it down) and carry the same Message-ID. The
 * distribution's counts are exact and distribution.sent is recorded once. The in-process service only serves
 * the API, so it never takes the job itself. (`npm run bench -- distributions` does the same with 10,000.)
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { activeSurvey, insertPeople, people, tenant, waitForStatus } from './fixtures.js';
import { startTestSmtp, type TestSmtp } from './smtp.js';

const RECIPIENTS = 2_000;
/** Messages in flight at most (sender.ts IN_FLIGHT): the only ones a kill can duplicate. */
const IN_FLIGHT = 16;

let t: TestService;
let smtp: TestSmtp;
const workers: ServiceProcess[] = [];
beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestService({ role: 'api', smtpUrl: smtp.url });
  t.service.deps.config.publicBaseUrl = t.url;
});
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop('SIGTERM');
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const startWorker = async () => {
  const worker = await startServiceProcess({
    databaseUrl: t.database.url,
    role: 'worker',
    env: { SMTP_URL: smtp.url, MAIL_RATE_PER_SECOND: '0', PUBLIC_BASE_URL: t.url },
  });
  workers.push(worker);
  return worker;
};

it(
  `an e-mail send to ${RECIPIENTS} survives SIGKILL of its worker: one message per recipient, exact counts`,
  { timeout: 120_000 },
  async () => {
    const { live, organizationId } = await tenant(t);
    await insertPeople(t, organizationId, people(RECIPIENTS, 'K'));
    const surveyId = await activeSurvey(live);
    const worker = await startWorker();
    const d = await live.unwrap(
      live.POST('/api/v1/surveys/{surveyId}/distribute', {
        params: { path: { surveyId } },
        body: { targeting: { filters: [] }, distribution: { method: 'email' } },
      }),
    );

    const sentSoFar = async () =>
      (
        await t.db
          .selectFrom('distribution_recipients')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('distribution_id', '=', d.id)
          .where('status', '=', 'sent')
          .executeTakeFirstOrThrow()
      ).n;
    const atKill = await eventually(
      async () => {
        const sent = await sentSoFar();
        return sent >= RECIPIENTS * 0.3 && sent;
      },
      60_000,
      'the send to make progress',
      10,
    );
    await worker.stop('SIGKILL');
    const interrupted = await sentSoFar();
    expect(interrupted).toBeLessThan(RECIPIENTS);
    expect(
      (
        await live.unwrap(
          live.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
            params: { path: { surveyId, distributionId: d.id } },
          }),
        )
      ).status,
    ).toBe('sending');

    await startWorker();
    const done = await waitForStatus(live, surveyId, d.id, ['sent'], 90_000);
    await smtp.settled();
    expect(done).toMatchObject({ status: 'sent', matchedCount: RECIPIENTS, sentCount: RECIPIENTS, failedCount: 0 });

    const messageIds = new Map<string, Set<string>>();
    for (const mail of smtp.received) {
      for (const to of mail.envelopeTo) messageIds.set(to, (messageIds.get(to) ?? new Set()).add(mail.messageId ?? ''));
    }
    const copies = [...smtp.counts.values()].reduce((a, b) => a + b, 0);
    expect(smtp.counts.size).toBe(RECIPIENTS);
    expect(messageIds.size).toBe(RECIPIENTS);
    expect([...messageIds.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(copies - RECIPIENTS).toBeLessThanOrEqual(IN_FLIGHT);
    console.log(
      `crash test: killed with ${atKill} of ${RECIPIENTS} recorded as sent; ${copies - RECIPIENTS} duplicate copies (same Message-ID) at the SMTP server`,
    );

    const row = await t.db
      .selectFrom('distributions')
      .select(['attempts', 'sent_count'])
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(2);
    const events = await t.db
      .selectFrom('events')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('type', '=', 'distribution.sent')
      .execute();
    expect(events).toHaveLength(1);
  },
);
