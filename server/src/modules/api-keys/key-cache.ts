/**
 * API keys (with their organization's plan and limits) cached in each process, so that an authenticated
 * request does not start with a database round trip. Correctness comes from invalidation, not from expiry: the
 * writer of every relevant change to `api_keys` and `organizations` (a revocation through the API or the CLI, a
 * plan change) announces it on `survey_service_keys` in its transaction (announce.ts), and every process
 * LISTENs and drops the entry, so the change is seen within the notification's delivery (milliseconds). A change
 * made by plain SQL is not announced: the bound below covers it. While the listener is not connected, nothing is
 * cached, and what was cached is dropped when it reconnects (db/listener.ts).
 *
 * Two rules keep a cached key from outliving a revocation:
 * - a lookup that was in flight when any invalidation arrived is not cached (it may have read the row before the
 *   revoking transaction committed, and its notification has already been spent on an empty cache);
 * - an entry is trusted for at most `maxAgeMs` after the lookup that produced it began, so even a notification
 *   that never arrives (a listener reconnecting, a change made by a path that does not announce it) is bounded.
 *
 * A notification is delivered at commit, but handled by each process when its event loop gets to it, which on a
 * loaded machine can be after the next request. So a revocation through the API waits for the drop to be
 * acknowledged: every listener replies a `key:` notification, once its entry is gone, with `ack:<hash>` on the same
 * channel, and `dropEverywhere` returns once every listener connection of this database (its backend pid, from
 * pg_stat_activity) has replied, or after `maxAgeMs`, when the expiry takes over.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { Listener, type ListenerConnection } from '../../db/listener.js';
import type { Logger } from '../../logger.js';
import { keyChannel } from './announce.js';
import { findKeyByHash, type KeyWithOrganization } from './repository.js';

/** The documented bound: no process trusts a key row read more than this long ago. */
export const maxAgeMs = 1_000;
const maxEntries = 10_000;
const listenerName = 'survey-service-key-cache';

/** A revocation waiting for every process to drop the key: the listener backends that acknowledged so far. */
interface DropWaiter {
  keyHash: string;
  acknowledgedBy: Set<number>;
  changed: () => void;
}

export class KeyCache {
  private readonly entries = new Map<string, { row: KeyWithOrganization; at: number }>();
  private readonly listener: Listener;
  /** Bumped by every invalidation: a lookup that started under an older generation must not be cached. */
  private generation = 0;
  private readonly waiters = new Set<DropWaiter>();

  constructor(
    private readonly db: Db,
    connection: ListenerConnection,
    private readonly log: Logger,
  ) {
    this.listener = new Listener({
      ...connection,
      applicationName: listenerName,
      channels: [keyChannel],
      onNotification: (message) => this.received(message.payload ?? '', message.processId),
      // Anything cached, or being looked up, before the LISTEN may have missed a change: a key revoked while the
      // listener was away is refused at once afterwards.
      onListening: () => this.forgetAll(),
      onLost: () => this.forgetAll(),
    });
  }

  private get listening(): boolean {
    return this.listener.listening;
  }

  async start(): Promise<void> {
    await this.listener.start();
  }

  private forgetAll(): void {
    this.generation++;
    this.entries.clear();
  }

  private received(payload: string, fromBackend: number): void {
    if (payload.startsWith('ack:')) {
      const keyHash = payload.slice(4);
      for (const waiter of this.waiters) {
        if (waiter.keyHash !== keyHash) continue;
        waiter.acknowledgedBy.add(fromBackend);
        waiter.changed();
      }
      return;
    }
    this.invalidate(payload);
    // Only after the entry is gone: the revoking process may reply its client once every process has said so.
    if (payload.startsWith('key:')) {
      this.listener
        .query('select pg_notify($1, $2)', [keyChannel, `ack:${payload.slice(4)}`])
        .catch((error: unknown) => {
          this.log.warn({ err: error }, 'could not acknowledge a key change; its revoker waits for the cache bound');
        });
    }
  }

  private invalidate(payload: string): void {
    this.generation++;
    if (payload.startsWith('key:')) {
      this.entries.delete(payload.slice(4));
      return;
    }
    if (payload.startsWith('org:')) {
      const organizationId = payload.slice(4);
      for (const [hash, entry] of this.entries)
        if (entry.row.organization_id === organizationId) this.entries.delete(hash);
      return;
    }
    this.forgetAll();
  }

  async find(keyHash: string): Promise<KeyWithOrganization | undefined> {
    const cached = this.entries.get(keyHash);
    if (cached && this.listening && Date.now() - cached.at < maxAgeMs) return cached.row;
    const generation = this.generation;
    const startedAt = Date.now();
    const row = await findKeyByHash(this.db, keyHash);
    // Only existing keys are cached: unknown keys are refused by the failure throttle, not by memory.
    if (row && this.listening && generation === this.generation) {
      if (this.entries.size >= maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(keyHash, { row, at: startedAt });
    }
    return row;
  }

  /** The key's use was just recorded: the cached copy says so, so that the next requests do not record it again. */
  touched(apiKeyId: string): void {
    for (const entry of this.entries.values())
      if (entry.row.id === apiKeyId) entry.row = { ...entry.row, last_used_at: new Date() };
  }

  /**
   * Call before the change that revokes `keyHash`; after it commits, `settled()` resolves once every process
   * listening on this database has dropped the key, or after `maxAgeMs` (then no process trusts its copy anyway).
   * `cancel()` when the change did not happen.
   */
  dropEverywhere(keyHash: string): { settled(): Promise<void>; cancel(): void } {
    let wake: () => void = () => {};
    const waiter: DropWaiter = { keyHash, acknowledgedBy: new Set(), changed: () => wake() };
    this.waiters.add(waiter);
    const cancel = () => this.waiters.delete(waiter);
    const settled = async () => {
      const deadline = Date.now() + maxAgeMs;
      try {
        const listeners = await this.listenerBackends();
        while (!listeners.every((pid) => waiter.acknowledgedBy.has(pid))) {
          const left = deadline - Date.now();
          if (left <= 0) {
            this.log.warn(
              { missing: listeners.filter((pid) => !waiter.acknowledgedBy.has(pid)).length },
              'key drop not acknowledged by every process; the cache bound applies',
            );
            return;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, left);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      } finally {
        cancel();
      }
    };
    return { settled, cancel };
  }

  /** Backend pids of every key-cache listener on this database; none when they cannot be read (the bound applies). */
  private async listenerBackends(): Promise<number[]> {
    try {
      const { rows } = await this.db.executeQuery<{ pid: number }>(
        sql`select pid from pg_stat_activity where datname = current_database() and application_name = ${listenerName}`.compile(
          this.db,
        ),
      );
      return rows.map((row) => row.pid);
    } catch (error) {
      this.log.warn({ err: error }, 'could not list key-cache listeners; a revocation relies on the cache bound');
      return [];
    }
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}
