/**
 * What the service's code may use — handlers, jobs, the webhook dispatcher — and nothing global: one value per
 * process, built by the composition root (start.ts) and handed down. Its members are interfaces and shared services;
 * no feature module's type appears here, so every layer can name it without depending on a module.
 */
import type PgBoss from 'pg-boss';
import type pg from 'pg';
import type { Config } from './config.js';
import type { DatabaseAvailability } from './db/availability.js';
import type { Db } from './db/database.js';
import type { KeyAuthority } from './http/auth-context.js';
import type { AuthFailures } from './http/auth-failures.js';
import type { InFlightWork } from './http/in-flight.js';
import type { RateLimits } from './http/rate-limit.js';
import type { Logger } from './logger.js';

export interface Dependencies {
  config: Config;
  db: Db;
  /** The pool behind `db` (for the idempotency store's request transactions). */
  pool: pg.Pool;
  boss: PgBoss;
  log: Logger;
  rateLimits: RateLimits;
  /** The bookkeeping pool (no synchronous commit): key use, counters, reads' audit entries. Not for business data. */
  counters: Db;
  /** Request work still running (shutdown waits for it). */
  inFlight: InFlightWork;
  /** The bundled contract, as served by getOpenApiDocument. */
  contractJson: string;
  /**
   * The API keys of this process (modules/api-keys): authentication's checks, and a revocation's wait until every
   * process has dropped the key (LISTEN/NOTIFY).
   */
  keys: KeyAuthority & {
    dropEverywhere(keyHash: string): { settled(): Promise<void>; cancel(): void };
    start(): Promise<void>;
    close(): Promise<void>;
  };
  /** Failed authentications per source (429 before a lookup). */
  authFailures: AuthFailures;
  /** Whether PostgreSQL is reachable, as this process's connections find it (one log line per change). */
  availability: DatabaseAvailability;
}
