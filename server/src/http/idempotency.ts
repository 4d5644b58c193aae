/**
 * `Idempotency-Key` on POST, Stripe's way: the first request with a key runs and its answer is kept for 24 hours;
 * a retry with the same key and body gets that answer again; another body gets 409 idempotency_conflict.
 * Concurrent duplicates run once: the key row is claimed with an INSERT … ON CONFLICT DO NOTHING, and the
 * loser waits for the winner's answer. Answers of 5xx are not kept, so a retry runs again. Requests that fail
 * validation never reach here, so they are not kept either.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { ApiError } from './errors.js';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

const retention = sql`interval '24 hours'`;
const waitForRunningMs = 10_000;

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body)}`).digest('hex');
}

/** JSON with sorted object keys, so that key order does not make two equal bodies differ. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

interface Scope {
  organizationId: string;
  environment: Environment;
  key: string;
  hash: string;
}

/**
 * Runs `execute` once per key. Returns the answer and whether it is a replay.
 */
export async function runIdempotent(
  db: Db,
  scope: Scope,
  execute: () => Promise<StoredAnswer>,
  /** What of the answer is written to the store (secrets are left out). */
  toKeep: (answer: StoredAnswer) => StoredAnswer = (answer) => answer,
): Promise<{ answer: StoredAnswer; replayed: boolean }> {
  const where = db
    .selectFrom('idempotency_keys')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('idempotency_key', '=', scope.key);

  const deadline = Date.now() + waitForRunningMs;
  for (;;) {
    // Forget an expired use of this key before claiming it.
    await db
      .deleteFrom('idempotency_keys')
      .where('organization_id', '=', scope.organizationId)
      .where('environment', '=', scope.environment)
      .where('idempotency_key', '=', scope.key)
      .where('created_at', '<', sql<Date>`now() - ${retention}`)
      .execute();
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({
        organization_id: scope.organizationId,
        environment: scope.environment,
        idempotency_key: scope.key,
        request_hash: scope.hash,
        state: 'running',
        response_status: null,
        response_body: null,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('state')
      .executeTakeFirst();
    if (claimed) return { answer: await executeAndKeep(db, scope, execute, toKeep), replayed: false };

    const existing = await where.select(['request_hash', 'state', 'response_status', 'response_body']).executeTakeFirst();
    if (!existing) continue; // released between our insert and select: try to claim again
    if (existing.request_hash !== scope.hash) {
      throw new ApiError(409, 'idempotency_conflict', 'This Idempotency-Key was already used with a different request.', [
        { path: '/headers/idempotency-key', message: 'reuse a key only to retry the identical request', code: 'duplicate' },
      ]);
    }
    if (existing.state === 'done' && existing.response_status !== null) {
      return { answer: { status: existing.response_status, body: existing.response_body }, replayed: true };
    }
    if (Date.now() > deadline) {
      throw new ApiError(409, 'idempotency_in_progress', 'A request with this Idempotency-Key is still running.', undefined, { 'Retry-After': '1' });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function executeAndKeep(db: Db, scope: Scope, execute: () => Promise<StoredAnswer>, toKeep: (answer: StoredAnswer) => StoredAnswer): Promise<StoredAnswer> {
  const release = () =>
    db
      .deleteFrom('idempotency_keys')
      .where('organization_id', '=', scope.organizationId)
      .where('environment', '=', scope.environment)
      .where('idempotency_key', '=', scope.key)
      .execute();
  let answer: StoredAnswer;
  try {
    answer = await execute();
  } catch (error) {
    await release();
    throw error;
  }
  if (answer.status >= 500) {
    await release();
    return answer;
  }
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: answer.status, response_body: JSON.stringify(toKeep(answer).body) })
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('idempotency_key', '=', scope.key)
    .execute();
  return answer;
}

export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', sql<Date>`now() - ${retention}`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
