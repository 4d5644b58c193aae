/**
 * The webhook dispatcher of a worker process: claims due deliveries (queue.ts), sends them (sender.ts), records
 * every attempt and schedules retries. Woken by the NOTIFY that `recordEvent`'s transaction sends on commit, so
 * an event reaches its endpoints within milliseconds; otherwise it sleeps until the next due retry (at most a
 * second between looks, which also picks up rows whose claimant died).
 *
 * Isolation: at most `perWebhook` attempts per webhook run at once in a process, and the claim skips webhooks at
 * that limit, so one slow or dead endpoint occupies a few slots while every other webhook's deliveries go on.
 */
import { Webhook } from 'standardwebhooks';
import type { Dependencies } from '../../dependencies.js';
import { onCitus } from '../../db/citus.js';
import { Listener, listenerConnection } from '../../db/listener.js';
import { deliveryWakeChannel } from '../events/index.js';
import {
  claimDue,
  msUntilNextDue,
  recordFailure,
  recordSuccesses,
  type ClaimedDelivery,
  type Outcome,
  type Success,
} from './queue.js';
import { nextDelayMs, parseRetryAfter } from './schedule.js';
import { postWebhook, type AttemptResult } from './sender.js';

export interface DispatcherOptions {
  perWebhook: number;
  total: number;
  claimBatch: number;
  idlePollMs: number;
  /** Five days of failures disable a webhook. */
  disableAfterMs: number;
  /** Successes are written together, at most this long after the first of a batch. */
  recordDelayMs: number;
}

export const dispatcherDefaults: DispatcherOptions = {
  perWebhook: 16,
  total: 256,
  claimBatch: 100,
  idlePollMs: 1000,
  disableAfterMs: 5 * 24 * 3600 * 1000,
  recordDelayMs: 10,
};

/** Gathers successes for a few milliseconds and writes them in one statement; each caller waits for its write. */
class SuccessRecorder {
  private batch: Array<Success & { done: () => void; failed: (error: unknown) => void }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (successes: Success[]) => Promise<void>,
    private readonly delayMs: number,
    private readonly maxBatch: number,
  ) {}

  record(success: Success): Promise<void> {
    return new Promise<void>((done, failed) => {
      this.batch.push({ ...success, done, failed });
      if (this.batch.length >= this.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.delayMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    this.write(batch).then(
      () => batch.forEach((s) => s.done()),
      (error: unknown) => batch.forEach((s) => s.failed(error)),
    );
  }
}

/** The body every attempt of an event carries: the event as `listEvents` shows it, data copied as stored. */
export function eventBody(
  row: Pick<ClaimedDelivery, 'event_id' | 'event_type' | 'event_created_at' | 'event_data'>,
): string {
  return `{"id":${JSON.stringify(row.event_id)},"type":${JSON.stringify(row.event_type)},"createdAt":${JSON.stringify(row.event_created_at.toISOString())},"data":${row.event_data}}`;
}

const signers = new Map<string, Webhook>();
function signerFor(secret: string): Webhook {
  let signer = signers.get(secret);
  if (!signer) {
    if (signers.size > 10_000) signers.clear();
    signer = new Webhook(secret);
    signers.set(secret, signer);
  }
  return signer;
}

/** Standard Webhooks headers; one `v1,` signature per secret that signs now (two during a rotation). */
export function signedHeaders(id: string, body: string, secrets: readonly string[], at: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => signerFor(secret).sign(id, at, body)).join(' '),
  };
}

/** What an answer means: 2xx success; 3xx never followed; everything else a failure. */
export function outcomeOf(result: AttemptResult): Outcome {
  const base = {
    responseStatus: result.status ?? null,
    latencyMs: result.latencyMs,
    excerpt: result.status === undefined ? null : (result.excerpt ?? ''),
  };
  if (result.status === undefined) return { ...base, succeeded: false, error: result.error ?? 'no answer' };
  if (result.status >= 200 && result.status < 300) return { ...base, succeeded: true, error: null };
  if (result.status >= 300 && result.status < 400) {
    return {
      ...base,
      succeeded: false,
      error: `HTTP ${result.status}: redirects are not followed${result.location ? ` (to ${result.location.slice(0, 500)})` : ''}`,
    };
  }
  return { ...base, succeeded: false, error: `HTTP ${result.status}` };
}

export class WebhookDispatcher {
  private readonly options: DispatcherOptions;
  private readonly running = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private total = 0;
  private stopped = false;
  private limited = false;
  private wakeUp: (() => void) | undefined;
  private listener: Listener | undefined;
  private loopDone: Promise<void> | undefined;
  private readonly successes: SuccessRecorder;
  /** Whether the queue is sharded by Citus, which changes how due rows are claimed (claimDue). */
  private sharded = false;

  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'log' | 'config' | 'availability'>,
    private readonly connectionString: string,
    options: Partial<DispatcherOptions> = {},
  ) {
    this.options = { ...dispatcherDefaults, ...options };
    this.successes = new SuccessRecorder(
      (batch) => recordSuccesses(deps.db, batch, this.sharded),
      this.options.recordDelayMs,
      this.options.claimBatch,
    );
  }

  async start(): Promise<void> {
    this.sharded = await onCitus(this.deps.db);
    this.listener = new Listener({
      ...listenerConnection(this.deps.config, this.deps.availability, this.connectionString),
      applicationName: 'survey-service-webhooks',
      channels: [deliveryWakeChannel],
      onNotification: () => this.wake(),
      // A wake-up sent while the listener was away is lost: look for due deliveries now (the loop also polls).
      onListening: () => this.wake(),
    });
    await this.listener.start();
    this.loopDone = this.loop();
  }

  /** Stops claiming, lets attempts in flight finish (bounded by their timeout), closes the listener. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.attempts]);
    await this.listener?.close();
  }

  private wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = undefined;
    wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let full = false;
      try {
        const room = this.options.total - this.total;
        const saturated = [...this.running].filter(([, n]) => n >= this.options.perWebhook).map(([id]) => id);
        this.limited = room <= 0 || saturated.length > 0;
        if (room > 0) {
          const batch = Math.min(room, this.options.claimBatch);
          const claimed = await claimDue(
            this.deps.db,
            batch,
            this.deps.config.webhookTimeoutMs + 5_000,
            saturated,
            this.sharded,
          );
          for (const row of claimed) this.launch(row);
          full = claimed.length === batch;
        }
        if (full || this.stopped) continue;
        const next = room > 0 ? await msUntilNextDue(this.deps.db) : undefined;
        await this.sleep(Math.max(5, Math.min(next ?? this.options.idlePollMs, this.options.idlePollMs)));
      } catch (error) {
        // The database gone is logged once, by the availability; anything else is worth a line each time.
        if (!this.deps.availability.failed(error, 'webhook dispatcher'))
          this.deps.log.error({ err: error }, 'webhook dispatcher: claiming failed; retrying');
        await this.sleep(this.options.idlePollMs);
      }
    }
  }

  private launch(row: ClaimedDelivery): void {
    this.total++;
    this.running.set(row.webhook_id, (this.running.get(row.webhook_id) ?? 0) + 1);
    const attempt = this.attempt(row)
      .catch((error: unknown) => {
        // Either way the attempt runs again after its lease; the database gone is logged once, by the availability.
        if (!this.deps.availability.failed(error, 'webhook dispatcher'))
          this.deps.log.error(
            { err: error, deliveryId: row.id },
            'webhook attempt not recorded; it runs again after its lease',
          );
      })
      .finally(() => {
        this.total--;
        const left = (this.running.get(row.webhook_id) ?? 1) - 1;
        if (left === 0) this.running.delete(row.webhook_id);
        else this.running.set(row.webhook_id, left);
        this.attempts.delete(attempt);
        if (this.limited) this.wake();
      });
    this.attempts.add(attempt);
  }

  private async attempt(row: ClaimedDelivery): Promise<void> {
    const { config, db } = this.deps;
    // A disabled webhook gets only test sends; anything else still queued is cancelled.
    if (!row.enabled && row.event_type !== 'webhook.test') {
      const outcome = {
        succeeded: false,
        responseStatus: null,
        latencyMs: null,
        error: 'cancelled: the webhook was disabled',
        excerpt: null,
      };
      await recordFailure(db, row, outcome, {
        gone: false,
        retryDelayMs: undefined,
        disableAfterMs: this.options.disableAfterMs,
        cancelled: true,
      });
      return;
    }
    const body = eventBody(row);
    const headers = signedHeaders(row.event_id, body, row.secrets, new Date());
    const result = await postWebhook(row.url, headers, body, {
      timeoutMs: config.webhookTimeoutMs,
      allowLoopback: config.allowLoopbackWebhooks,
    });
    const outcome = outcomeOf(result);
    if (outcome.succeeded) {
      await this.successes.record({ row, outcome, at: new Date() });
      return;
    }
    const retryAfterMs =
      result.status === 429 || result.status === 503 ? parseRetryAfter(result.retryAfter) : undefined;
    const recorded = await recordFailure(db, row, outcome, {
      gone: result.status === 410,
      retryDelayMs: nextDelayMs(config.webhookRetryScheduleMs, row.attempt, retryAfterMs),
      disableAfterMs: this.options.disableAfterMs,
    });
    if (recorded.disabled)
      this.deps.log.warn({ webhookId: row.webhook_id, reason: recorded.disabled }, 'webhook disabled');
    // The retry's due time is known here: make sure this process looks again by then.
    if (recorded.nextRetryAt) {
      const wait = recorded.nextRetryAt.getTime() - Date.now();
      if (wait < this.options.idlePollMs) setTimeout(() => this.wake(), Math.max(0, wait)).unref();
    }
  }
}
