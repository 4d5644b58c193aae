/**
 * API keys (with their organization's plan and limits) cached in each process, so that an authenticated
 * request does not start with a database round trip. Correctness comes from invalidation, not from expiry: a
 * trigger announces every relevant change to `api_keys` and `organizations` on `survey_service_keys`
 * (migration 2026-11-24T0200), and every process LISTENs and drops the entry, so a revocation made by any
 * process, the CLI or plain SQL is seen within the notification's delivery (milliseconds). While the listener is
 * not connected, nothing is cached; a short expiry bounds the damage of anything unforeseen.
 */
import pg from 'pg';
import type { Db } from '../db/database.js';
import type { Logger } from '../logger.js';
import { findKeyByHash, type KeyWithOrganization } from '../modules/api-keys/repository.js';

export const keyChannel = 'survey_service_keys';
const maxAgeMs = 60_000;
const maxEntries = 10_000;

export class KeyCache {
  private readonly entries = new Map<string, { row: KeyWithOrganization; at: number }>();
  private listening = false;
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'survey-service-key-cache' });
    const lost = (error?: unknown) => {
      if (this.client !== client) return;
      this.listening = false;
      this.entries.clear();
      this.client = undefined;
      client.end().catch(() => {});
      if (this.closed) return;
      if (error) this.log.warn({ err: error }, 'key-cache listener lost; keys are looked up on every request until it is back');
      this.retry = setTimeout(() => void this.connect(), 1_000);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => this.invalidate(message.payload ?? ''));
    this.client = client;
    try {
      await client.connect();
      await client.query(`listen ${keyChannel}`);
      this.entries.clear(); // anything cached before the LISTEN may have missed a change
      this.listening = true;
    } catch (error) {
      lost(error);
    }
  }

  private invalidate(payload: string): void {
    if (payload.startsWith('key:')) {
      this.entries.delete(payload.slice(4));
      return;
    }
    if (payload.startsWith('org:')) {
      const organizationId = payload.slice(4);
      for (const [hash, entry] of this.entries) if (entry.row.organization_id === organizationId) this.entries.delete(hash);
      return;
    }
    this.entries.clear();
  }

  async find(keyHash: string): Promise<KeyWithOrganization | undefined> {
    const cached = this.entries.get(keyHash);
    if (cached && this.listening && Date.now() - cached.at < maxAgeMs) return cached.row;
    const row = await findKeyByHash(this.db, keyHash);
    // Only existing keys are cached: unknown keys are refused by the failure throttle, not by memory.
    if (row && this.listening) {
      if (this.entries.size >= maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(keyHash, { row, at: Date.now() });
    }
    return row;
  }

  /** The key's use was just recorded: keep the cached copy from asking again for a minute. */
  touched(apiKeyId: string): void {
    for (const entry of this.entries.values()) if (entry.row.id === apiKeyId) entry.row = { ...entry.row, last_used_at: new Date() };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}
