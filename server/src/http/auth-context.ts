/**
 * Who is calling: what authentication (authenticate.ts) gives every handler, and what it asks of the API keys. The
 * keys themselves are a feature module's (modules/api-keys), handed in by the composition root (start.ts), so the
 * HTTP layer knows the shape of a key check and nothing of how keys are stored, hashed or cached.
 */
import type { Environment, Plan } from '../db/schema.js';

export interface AuthContext {
  organizationId: string;
  organizationName: string;
  plan: Plan;
  environment: Environment;
  apiKeyId: string;
  apiKeyName: string;
  scopes: string[];
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
}

/** The API keys as authentication uses them. */
export interface KeyAuthority {
  /** The holder of a bearer token; an `ApiError` 401 saying why when it is not a well-formed, valid, live key. */
  identify(token: string): Promise<AuthContext>;
  /** Records that the key was used now (bookkeeping: written at most once a minute, never fails the request). */
  noteUse(auth: AuthContext): void;
}
