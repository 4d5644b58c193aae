/**
 * The worker side of a distribution: at the send time, match and freeze the audience (or hold, or cancel),
 * then send; later, the reminder.
 *
 * Ownership (jobs/owned.ts): the worker running a distribution holds a session advisory lock on it, on the
 * connection that records the outcomes; PostgreSQL drops it the moment that process dies (SIGKILL included).
 * Every job on the queue means "make progress on this distribution": a job that finds the lock held re-enqueues
 * itself a few seconds later, one that finds it free resumes the work, one that finds the work done stops. The
 * owner enqueues such a check when it starts, so a killed worker's distribution resumes within seconds.
 *
 * Once per recipient: a recipient is `pending` until the mail server accepted its message, and the outcome is
 * written right after the server's answer. A resumed send mails exactly the recipients still `pending`. The
 * one ambiguity no protocol between two systems can remove — the server accepted the message and the worker
 * died before writing it down, a window of about a millisecond per message in flight — re-sends that message
 * with the same Message-ID (see messages.ts), so the duplicate is recognisable downstream. Counts are computed
 * from the recipient rows, so they are exact whatever happened.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { tenantOf, type Tenant } from '../../db/tenant.js';
import type { Dependencies } from '../../dependencies.js';
import { checkAgainLater, runOwned, type Watchdog } from '../../jobs/owned.js';
import { recordEvent } from '../events/index.js';
import * as surveys from '../surveys/index.js';
import { checkTargeting } from '../targeting/index.js';
import { createMailSender, SMTP_CONNECTIONS, type MailSender } from './mailer.js';
import { buildMessage } from './messages.js';
import { distributionQueue, type DistributionJobData } from './queue.js';
import * as repo from './repository.js';
import type { DistributionRow, SendTarget } from './repository.js';
import { answerUrl, baseUrlOf, toDistribution, unsubscribeUrl } from './service.js';
import { embedTokenHash, linkKeyOf, personalToken, type LinkKey } from './tokens.js';

/** Runs (worker deaths, unreachable mail server) before a distribution is failed. */
const MAX_RUNS = 8;
/** Temporary refusals (4xx) of one recipient before it is `failed`. */
const MAX_RECIPIENT_ATTEMPTS = 3;
/** Waits between passes over recipients the server deferred. */
const PASS_DELAYS_MS = [1_000, 3_000];
/** Waits while the mail server cannot be reached at all (about 12 minutes), then the distribution fails. */
const OUTAGE_DELAYS_MS = [5_000, 30_000, 120_000, 600_000];

class MailServerUnreachable extends Error {}
const PAGE_SIZE = 500;
/** Messages in flight at once (the transport queues them over its connections). */
const IN_FLIGHT = SMTP_CONNECTIONS * 2;

/**
 * Writes outcomes as soon as possible, batching only what arrives while a write is running (group commit):
 * at low load every outcome is written alone right after the server's answer, under load the backlog is
 * written in one statement instead of queueing one statement per message. `record` resolves once the outcome
 * is committed, and a sending lane waits for it before its next message: so at any moment at most IN_FLIGHT
 * messages are accepted by the server without being written down (the only ones a kill can duplicate).
 */
class OutcomeWriter {
  private queue: Array<{ outcome: repo.Outcome; done: () => void; failed: (error: unknown) => void }> = [];
  private running = false;
  constructor(private readonly write: (batch: repo.Outcome[]) => Promise<void>) {}

  record(outcome: repo.Outcome): Promise<void> {
    return new Promise((done, failed) => {
      this.queue.push({ outcome, done, failed });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.write(batch.map((entry) => entry.outcome));
        for (const entry of batch) entry.done();
      } catch (error) {
        for (const entry of batch) entry.failed(error);
      }
    }
    this.running = false;
  }
}

type RunDeps = Pick<Dependencies, 'db' | 'boss' | 'log' | 'config'>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A check of the distribution `seconds` ahead, enqueued by pg-boss on its own connection (no transaction). */
const check =
  (deps: RunDeps, data: DistributionJobData): Watchdog =>
  (seconds) =>
    deps.boss.send(distributionQueue.name, data, { startAfter: seconds });

/**
 * Outcomes are written on the owner's connection: a worker crash cannot lose a commit, a database crash could
 * lose the last few (then re-sent, same Message-ID) — worth one WAL flush less per message.
 */
const outcomesUnflushed = {
  enter: (conn: Db) => sql`set synchronous_commit = off`.execute(conn),
  leave: (conn: Db) => sql`reset synchronous_commit`.execute(conn),
};

/**
 * Runs, resumes or checks one distribution job: its send or its reminder, each owned under its own lock
 * (jobs/owned.ts). `busy`: a live worker owns it (checked again later).
 */
export async function runDistributionJob(deps: RunDeps, data: DistributionJobData): Promise<'busy' | 'finished'> {
  return data.kind === 'send' ? runSend(deps, data) : runReminder(deps, data);
}

/** The dead-man's switch of a distribution whose owner is alive: look again later. */
export async function checkLater(deps: RunDeps, data: DistributionJobData): Promise<void> {
  await checkAgainLater(check(deps, data));
}

function runSend(deps: RunDeps, data: DistributionJobData): Promise<'busy' | 'finished'> {
  const tenant = tenantOf(data);
  return runOwned(
    deps,
    {
      lock: `distributions.send:${data.distributionId}`,
      session: outcomesUnflushed,
      async load(conn) {
        const found = await repo.findDistribution(conn, tenant, data.distributionId);
        if (!found) return undefined;
        const current =
          found.status === 'scheduled' || found.status === 'held' ? await start(conn, deps, tenant, found) : found;
        return current?.status === 'sending' ? current : undefined;
      },
      maxRuns: {
        limit: MAX_RUNS,
        count: (distribution) => distribution.attempts,
        giveUp: (conn, distribution) =>
          fail(conn, tenant, distribution, `Sending stopped after ${MAX_RUNS} interrupted attempts.`),
      },
      beginRun: (conn, distribution) =>
        repo.updateDistribution(conn, tenant, distribution.id, { attempts: distribution.attempts + 1 }),
      watchdog: check(deps, data),
    },
    async (conn, distribution) => {
      if (distribution.method === 'email') {
        try {
          await sendAll(conn, deps, tenant, distribution);
        } catch (error) {
          if (!(error instanceof MailServerUnreachable)) throw error;
          await fail(conn, tenant, distribution, error.message);
          return;
        }
      }
      await finish(conn, deps, tenant, distribution.id);
    },
  );
}

/** The send time: hold, cancel, or match and freeze the audience (one transaction). */
async function start(
  conn: Db,
  deps: RunDeps,
  tenant: Tenant,
  row: DistributionRow,
): Promise<DistributionRow | undefined> {
  const key = await linkKeyOf(deps.db, deps.config.linkSecret);
  return conn.transaction().execute(async (tx) => {
    const current = await repo.findDistribution(tx, tenant, row.id, { forUpdate: true });
    if (!current || (current.status !== 'scheduled' && current.status !== 'held')) return current;
    // Locks the survey against a launch/pause/close racing this decision.
    const survey = await surveys.findSurvey(tx, tenant, current.survey_id, { forUpdate: true });
    if (!survey) return undefined;
    if (survey.status === 'closed') {
      await repo.updateDistribution(tx, tenant, current.id, {
        status: 'cancelled',
        completed_at: new Date(),
        failure_reason: 'The survey was closed before the send.',
      });
      return undefined;
    }
    if (survey.status !== 'active') {
      if (current.status !== 'held') await repo.updateDistribution(tx, tenant, current.id, { status: 'held' });
      const data: DistributionJobData = {
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        distributionId: current.id,
        kind: 'send',
      };
      await distributionQueue.send(deps.boss, tx, data, { startAfter: deps.config.distributionHoldRecheckSeconds });
      return undefined;
    }
    const checked = checkTargeting(current.targeting, '/targeting');
    if (!checked.ok)
      throw new Error(`stored targeting of ${current.id} no longer checks: ${JSON.stringify(checked.problems)}`);
    const now = new Date();
    const matched = await repo.freezeAudience(tx, tenant, current, checked.targeting, key, now);
    return repo.updateDistribution(tx, tenant, current.id, {
      status: 'sending',
      matched_count: matched,
      started_at: now,
      expires_at: new Date(now.getTime() + current.link_expires_in_days * 86_400_000),
      embed_token_hash: current.method === 'embed' ? embedTokenHash(key, current.id) : null,
    });
  });
}

async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

interface MailContext {
  sender: MailSender;
  key: LinkKey;
  surveyTitle: string;
  domain: string;
  /** The survey's languages, the first its default. */
  languages: readonly string[];
  /** The survey's translations, by language: what a recipient in that language reads. */
  translations: Map<string, surveys.TranslationInput>;
}

async function mailContext(deps: RunDeps, tenant: Tenant, distribution: DistributionRow): Promise<MailContext> {
  const survey = await surveys.findSurvey(deps.db, tenant, distribution.survey_id);
  const languages = survey?.languages ?? ['en'];
  const translations = new Map<string, surveys.TranslationInput>();
  for (const language of languages.slice(1)) {
    const translation = survey && (await surveys.findTranslationContent(deps.db, tenant, survey, language));
    if (translation) translations.set(language, translation);
  }
  return {
    sender: createMailSender(deps.config),
    key: await linkKeyOf(deps.db, deps.config.linkSecret),
    surveyTitle: survey?.title ?? 'Survey',
    domain: new URL(baseUrlOf(deps.config)).hostname || 'localhost',
    languages,
    translations,
  };
}

function messageFor(
  deps: RunDeps,
  context: MailContext,
  tenant: Tenant,
  distribution: DistributionRow,
  target: SendTarget,
  reminder: boolean,
) {
  const token = personalToken(context.key, tenant, distribution.id, target.external_id);
  // In the recipient's language when the survey is translated into it: the translation's e-mail, else the
  // distribution's words around the translated title; the service's own words in that language too.
  const language = surveys.chooseLanguage(context.languages, [target.language]);
  const translation = context.translations.get(language);
  const surveyTitle = translation?.title ?? context.surveyTitle;
  return buildMessage({
    from: deps.config.mailFrom,
    to: target.email,
    firstName: target.first_name,
    subject: translation?.email?.subject ?? distribution.subject ?? surveyTitle,
    message: translation?.email?.message ?? distribution.message,
    surveyTitle,
    answerUrl: answerUrl(deps.config, token),
    unsubscribeUrl: unsubscribeUrl(deps.config, token),
    expiresAt: distribution.expires_at ?? new Date(),
    distributionId: distribution.id,
    externalId: target.external_id,
    reminder,
    domain: context.domain,
    language,
  });
}

/**
 * Mails every pending recipient; passes again over deferred ones. While the server cannot be reached at all,
 * waits (holding the distribution) with growing delays, then gives up with MailServerUnreachable.
 */
async function sendAll(conn: Db, deps: RunDeps, tenant: Tenant, distribution: DistributionRow): Promise<void> {
  const context = await mailContext(deps, tenant, distribution);
  const log = deps.log.child({ distributionId: distribution.id });
  const outcomes = new OutcomeWriter((batch) => repo.recordOutcomes(conn, tenant, distribution.id, batch));
  let outages = 0;
  try {
    for (let pass = 0; ; pass++) {
      await repo.skipUnsubscribed(conn, tenant, distribution.id);
      let sent = 0;
      let unreachable = 0;
      let deferred = 0;
      let after = '';
      for (;;) {
        const page = await repo.pendingRecipients(conn, tenant, distribution.id, after, PAGE_SIZE);
        if (page.length === 0) break;
        after = page[page.length - 1]!.external_id;
        await forEachConcurrently(page, IN_FLIGHT, async (target) => {
          const outcome = await context.sender.send(messageFor(deps, context, tenant, distribution, target, false));
          if (outcome.kind === 'sent') {
            sent++;
            await outcomes.record({ externalId: target.external_id, status: 'sent', error: null });
          } else if (outcome.kind === 'bounced') {
            await outcomes.record({ externalId: target.external_id, status: 'bounced', error: outcome.error });
          } else if (outcome.connection) {
            // The server, not the address: the recipient keeps its attempts.
            unreachable++;
          } else {
            deferred++;
            const attempts = target.attempts + 1;
            await outcomes.record({
              externalId: target.external_id,
              status: attempts >= MAX_RECIPIENT_ATTEMPTS ? 'failed' : 'pending',
              error: outcome.error,
              attempts,
            });
          }
        });
      }
      if (unreachable === 0 && deferred === 0) return;
      if (unreachable > 0 && sent === 0) {
        const delay = OUTAGE_DELAYS_MS[outages++];
        if (delay === undefined)
          throw new MailServerUnreachable(
            `The mail server could not be reached; ${unreachable} recipients were not sent to.`,
          );
        log.warn({ unreachable, retryInMs: delay }, 'mail server unreachable; retrying');
        await sleep(delay);
        continue;
      }
      outages = 0;
      await sleep(PASS_DELAYS_MS[Math.min(pass, PASS_DELAYS_MS.length - 1)]!);
    }
  } finally {
    context.sender.close();
  }
}

/** Sending ended: counts from the rows, `sent`, the event and the reminder — one transaction. */
async function finish(conn: Db, deps: RunDeps, tenant: Tenant, distributionId: string): Promise<void> {
  const key = await linkKeyOf(deps.db, deps.config.linkSecret);
  await conn.transaction().execute(async (tx) => {
    const current = await repo.findDistribution(tx, tenant, distributionId, { forUpdate: true });
    if (!current || current.status !== 'sending') return;
    const counts = await repo.recipientCounts(tx, tenant, distributionId);
    const completed = await repo.updateDistribution(tx, tenant, distributionId, {
      status: 'sent',
      completed_at: new Date(),
      sent_count: (counts.sent ?? 0) + (counts.responded ?? 0),
      failed_count: (counts.failed ?? 0) + (counts.bounced ?? 0),
      unsubscribed_count: counts.unsubscribed ?? 0,
      no_email_count: counts.no_email ?? 0,
      reminder_status: current.reminder_enabled ? 'scheduled' : 'none',
    });
    // The embed token is a credential: events and their deliveries carry the distribution without it.
    await recordEvent(tx, tenant, 'distribution.sent', {
      ...toDistribution(completed, deps.config, key),
      embedCode: null,
    });
    if (current.reminder_enabled) {
      const at = new Date((current.started_at ?? new Date()).getTime() + current.reminder_after_days * 86_400_000);
      const data: DistributionJobData = {
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        distributionId,
        kind: 'remind',
      };
      await distributionQueue.send(deps.boss, tx, data, { startAfter: at });
    }
  });
}

async function fail(conn: Db, tenant: Tenant, distribution: DistributionRow, reason: string): Promise<void> {
  const counts = await repo.recipientCounts(conn, tenant, distribution.id);
  await repo.updateDistribution(conn, tenant, distribution.id, {
    status: 'failed',
    completed_at: new Date(),
    failure_reason: reason,
    sent_count: (counts.sent ?? 0) + (counts.responded ?? 0),
    failed_count: (counts.failed ?? 0) + (counts.bounced ?? 0),
    unsubscribed_count: counts.unsubscribed ?? 0,
    no_email_count: counts.no_email ?? 0,
  });
}

/** The reminder: once, to recipients sent to who have not answered and have not unsubscribed. */
function runReminder(deps: RunDeps, data: DistributionJobData): Promise<'busy' | 'finished'> {
  const tenant = tenantOf(data);
  return runOwned(
    deps,
    {
      lock: `distributions.remind:${data.distributionId}`,
      session: outcomesUnflushed,
      async load(conn) {
        const distribution = await repo.findDistribution(conn, tenant, data.distributionId);
        if (
          !distribution ||
          (distribution.reminder_status !== 'scheduled' && distribution.reminder_status !== 'sending')
        )
          return undefined;
        const survey = await surveys.findSurvey(conn, tenant, distribution.survey_id);
        if (!survey || survey.status === 'closed') {
          await repo.updateDistribution(conn, tenant, distribution.id, { reminder_status: 'cancelled' });
          return undefined;
        }
        if (survey.status !== 'active') {
          // Paused: remind when it is active again (nobody can answer meanwhile).
          await check(deps, data)(deps.config.distributionHoldRecheckSeconds);
          return undefined;
        }
        return distribution;
      },
      async beginRun(conn, distribution) {
        await repo.updateDistribution(conn, tenant, distribution.id, { reminder_status: 'sending' });
        return distribution;
      },
      watchdog: check(deps, data),
    },
    async (conn, distribution) => {
      const context = await mailContext(deps, tenant, distribution);
      try {
        let after = '';
        for (;;) {
          const page = await repo.reminderRecipients(conn, tenant, distribution, after, PAGE_SIZE);
          if (page.length === 0) break;
          after = page[page.length - 1]!.external_id;
          await forEachConcurrently(page, IN_FLIGHT, async (target) => {
            const outcome = await context.sender.send(messageFor(deps, context, tenant, distribution, target, true));
            // A refused reminder is not retried: the invitation itself was delivered.
            if (outcome.kind === 'sent') await repo.recordReminder(conn, tenant, distribution.id, target.external_id);
          });
        }
      } finally {
        context.sender.close();
      }
      await repo.updateDistribution(conn, tenant, distribution.id, {
        reminder_status: 'sent',
        reminder_sent_at: new Date(),
      });
    },
  );
}
