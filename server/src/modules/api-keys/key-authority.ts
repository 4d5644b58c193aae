/**
 * The API keys as the HTTP layer's authentication sees them (http/auth-context.ts `KeyAuthority`): a bearer token
 * checked against the per-process cache (key-cache.ts), and the key's use recorded on the bookkeeping pool.
 */
import { timingSafeEqual } from 'node:crypto';
import type { DatabaseAvailability } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import { unauthenticated, type AuthContext, type KeyAuthority } from '../../http/index.js';
import type { Logger } from '../../logger.js';
import type { KeyCache } from './key-cache.js';
import { hashKey, keyFormat } from './key-material.js';
import { touchKey } from './repository.js';

export interface KeyUseBookkeeping {
  /** The bookkeeping pool (no synchronous commit). */
  counters: Db;
  availability: DatabaseAvailability;
  log: Logger;
}

export class ApiKeyAuthority implements KeyAuthority {
  constructor(
    readonly cache: KeyCache,
    private readonly bookkeeping: KeyUseBookkeeping,
  ) {}

  async identify(token: string): Promise<AuthContext> {
    if (!keyFormat.test(token)) {
      throw unauthenticated(
        'The Authorization header must be "Bearer " followed by a key of the form svc_live_<64 hex> or svc_test_<64 hex>.',
      );
    }
    const presentedHash = hashKey(token);
    const row = await this.cache.find(presentedHash);
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(presentedHash, 'hex'))) {
      throw unauthenticated('This API key is not valid.');
    }
    if (row.revoked_at) throw unauthenticated('This API key has been revoked.');
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw unauthenticated('This API key has expired.');
    return {
      organizationId: row.organization_id,
      organizationName: row.organization_name,
      plan: row.plan,
      environment: row.environment,
      apiKeyId: row.id,
      apiKeyName: row.name,
      scopes: row.scopes,
      expiresAt: row.expires_at,
      lastUsedAt: row.last_used_at,
      rateLimitPerMinute: row.rate_limit_per_minute,
      rateLimitPerDay: row.rate_limit_per_day,
    };
  }

  noteUse(auth: AuthContext): void {
    // The lookup already read last_used_at: write only when it is a minute old, not on every request.
    if (auth.lastUsedAt && Date.now() - auth.lastUsedAt.getTime() <= 60_000) return;
    auth.lastUsedAt = new Date();
    this.cache.touched(auth.apiKeyId);
    const { counters, availability, log } = this.bookkeeping;
    touchKey(counters, auth.apiKeyId).catch((error: unknown) => {
      // The database gone is logged once, by the availability.
      if (!availability.failed(error, 'key use')) log.warn({ err: error }, 'could not record key use');
    });
  }

  /** See KeyCache.dropEverywhere: a revocation replies once every process has dropped the key. */
  dropEverywhere(keyHash: string): ReturnType<KeyCache['dropEverywhere']> {
    return this.cache.dropEverywhere(keyHash);
  }

  start(): Promise<void> {
    return this.cache.start();
  }

  close(): Promise<void> {
    return this.cache.close();
  }
}
