/**
 * Whether this process can reach PostgreSQL, as its own connections find it. The database goes away — a restart
 * for a minor upgrade, a failover, a crash, an idle connection killed by a proxy — and comes back; nothing in the
 * process may exit for it, and the log gets one line when it goes (with the cause) and one when it is back, not
 * one per failed request or poll.
 *
 * Every pool (database.ts), every dedicated connection (listener.ts) and pg-boss report to the one instance of a
 * process: a connection-class failure marks it down, a connection opened marks it up. Requests that meet the
 * database gone answer 503 `unavailable` with `Retry-After` (http/error-handler.ts); jobs wait here until it is
 * back, then run again from where their crash-safe state says (jobs/boss.ts).
 */
import type { Logger } from '../logger.js';

/** How Citus words a worker node it cannot reach, on paths where it gives no connection-class code (XX000). */
const citusNodeUnreachable =
  /failure on connection marked as essential|connection to the remote node .* failed|could not establish any connections to the node|connection not open/i;

/**
 * Connection-class failures of PostgreSQL: unreachable, shut down, restarting, in recovery, out of connections,
 * the database dropped or renamed (3D000), authentication of the service itself refused, a connection cut, a
 * Citus worker node unreachable. The caller should retry; it is neither their fault nor a bug.
 */
export function databaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (code === 'XX000' && citusNodeUnreachable.test(String((error as Error)?.message))) return true;
  if (typeof code !== 'string')
    return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Client was closed and is not queryable/i.test(
      String((error as Error)?.message),
    );
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EPIPE',
      'EAI_AGAIN',
      '3D000',
      '28000',
      '28P01',
      '53300',
      '57P01',
      '57P02',
      '57P03',
      '57P05',
    ].includes(code) || code.startsWith('08')
  );
}

/** The delay before reconnection attempt `attempt` (0-based): doubling from 100 ms up to `capMs`, with full jitter. */
export function reconnectDelay(attempt: number, capMs: number): number {
  const ceiling = Math.min(capMs, 100 * 2 ** Math.min(attempt, 20));
  // Half fixed, half random: processes that lost the database together do not all come back in the same instant.
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** How long after a connection was lost a connection-class error is still put down to that loss. */
const lossMemoryMs = 30_000;

/**
 * How long after the database is back a connection that was open before it went away may still report its loss
 * (a connection lent out while it went, pg-boss's) without marking it down again: a connection opened since then
 * works, and a database that really goes away again refuses new connections, which does mark it down.
 */
const staleLossMs = 10_000;

/** Failures to open a connection: the database is not there (or not for us), whatever connections were open. */
function refusal(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string')
    return (
      ['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03'].includes(code) ||
      code.startsWith('28') ||
      code === '3D000' ||
      code === '53300' ||
      code === '08001' ||
      code === '08004'
    );
  return /timeout exceeded when trying to connect|connection timeout/i.test(String(message));
}

export class DatabaseAvailability {
  private down: { since: number } | undefined;
  private lastLossAt = 0;
  private upSince = 0;

  constructor(private readonly log: Pick<Logger, 'warn' | 'info'>) {}

  get isDown(): boolean {
    return this.down !== undefined;
  }

  /**
   * A failure of one of the database's own connections (`where`: a pool, a listener, pg-boss, a probe). True when
   * it was a connection-class failure, which marks the database down (logged once, with its cause).
   */
  failed(error: unknown, where: string): boolean {
    if (!databaseUnavailable(error)) return false;
    this.lastLossAt = Date.now();
    if (!this.down && (refusal(error) || Date.now() - this.upSince > staleLossMs)) {
      this.down = { since: Date.now() };
      const { code, message } = error as { code?: string; message?: string };
      this.log.warn({ cause: { code, message }, where }, 'database unavailable: requests answer 503 until it is back');
    }
    return true;
  }

  /**
   * Whether `error`, thrown by work that also talks to other servers (SMTP, webhooks, an AI provider), is the
   * database's going away: connection-class, while the database is down or soon after one of its connections was
   * lost. An SMTP server refusing a connection is not.
   */
  explains(error: unknown): boolean {
    return databaseUnavailable(error) && (this.isDown || Date.now() - this.lastLossAt < lossMemoryMs);
  }

  /** A connection was opened: the database is (back) up. */
  reached(): void {
    if (!this.down) return;
    const downForMs = Date.now() - this.down.since;
    this.down = undefined;
    this.upSince = Date.now();
    this.log.info({ downForMs }, 'database reachable again');
  }

  /**
   * Resolves once `probe` (opening a connection and a trivial query) succeeds, trying with capped backoff and
   * jitter; resolves false at once when `stopping()` turns true (the process is shutting down).
   */
  async untilReachable(probe: () => Promise<unknown>, capMs: number, stopping: () => boolean): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (stopping()) return false;
      try {
        await probe();
        this.reached();
        return true;
      } catch (error) {
        if (!this.failed(error, 'probe')) throw error;
      }
      await sleep(reconnectDelay(attempt, capMs));
    }
  }
}
