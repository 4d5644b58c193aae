/**
 * `Idempotency-Key` on POST, Stripe's way: the first request with a key runs and its reply is kept for 24 hours;
 * a retry with the same key and body gets that reply again; another body gets 409 idempotency_conflict.
 *
 * Crash safety: the request runs in ONE transaction with the key's row (db/pinned.ts): the handler's
 * writes and the stored reply commit together, or — if the process dies — PostgreSQL rolls both back. The row
 * is claimed first (committed, `running`, with a lease); the transaction then locks it for as long as the
 * handler runs. A duplicate that finds the row `running`:
 *   - waits for the reply while the row is locked (the original is genuinely running), then replies 409
 *     idempotency_in_progress;
 *   - takes the key over when no transaction holds the row and the lease has lapsed (the original died: its
 *     writes were rolled back with it), and runs the request itself.
 * The lease only covers the moment between the claim and the lock, and the time PostgreSQL needs to notice a
 * dead client; after a crash a retry succeeds once it has lapsed (30 s by default).
 *
 * Replies of 5xx are not kept (the transaction is rolled back, the key released), so a retry runs again.
 * Requests that fail validation never reach here and are not kept either, but a key already in use for another
 * request is replied 409 before their 400 (`conflictBeforeRefusal`). Secrets are removed before the reply is
 * stored.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../db/database.js';
import { inPinnedTransaction, Rollback } from '../db/pinned.js';
import { acrossTenants, tenantColumns, tenantIs, type Tenant } from '../db/tenant.js';
import type { AuthContext } from './auth-context.js';
import { ApiError, type ErrorDetail } from './errors.js';
import { tooDeep } from './input-checks.js';

export interface StoredReply {
  status: number;
  body: unknown;
}

const retention = sql`interval '24 hours'`;

export interface IdempotencyTiming {
  /** How long a claim holds before a retry may take a key over whose request holds no transaction. */
  leaseMs: number;
  /** How long a duplicate waits for a running original before 409 idempotency_in_progress. */
  waitMs: number;
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
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

/** A key is the tenant's: the same key in another organization or environment is another key. */
interface Scope extends Tenant {
  key: string;
  hash: string;
}

const idempotencyConflict = () =>
  new ApiError(409, 'idempotency_conflict', 'This Idempotency-Key was already used with a different request.', [
    { path: '/headers/idempotency-key', message: 'reuse a key only to retry the identical request', code: 'duplicate' },
  ]);

/**
 * A keyed request refused before its handler — a body that is not JSON, characters nothing can store, a breach of
 * the contract — is not kept, so that a corrected retry runs. But when its key is already in use for another
 * request, that is the reply (409 idempotency_conflict), whatever is wrong with this one: a client that reuses a
 * key by mistake must learn so, not chase a 400 about a request it never meant to send again. A body identical to
 * the stored one keeps its 400 (its query may be what is wrong). Runs on the refusal path only, so a valid request
 * costs no extra query: `runIdempotent` compares the same fingerprint first thing.
 */
export function conflictBeforeRefusal(db: Db) {
  return async (error: unknown, req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.method === 'POST' ? req.get('idempotency-key') : undefined;
    const auth = res.locals.auth as AuthContext | undefined;
    if (!key || !auth || !refusedBeforeHandler(error, res)) return next(error);
    const problems = (res.locals.problems as ErrorDetail[] | undefined) ?? [];
    let stored: { request_hash: string } | undefined;
    try {
      stored = await db
        .selectFrom('idempotency_keys')
        .select('request_hash')
        .where(tenantIs(auth))
        .where('idempotency_key', '=', key)
        .where('created_at', '>=', sql<Date>`now() - ${retention}`)
        .executeTakeFirst();
    } catch {
      return next(error); // the refusal is the whole reply
    }
    if (stored && stored.request_hash !== fingerprint(req, error, problems)) return next(idempotencyConflict());
    next(error);
  };
}

/**
 * The request's fingerprint as `runIdempotent` computes it, or undefined for a body that did not parse or nests
 * too deep to walk: such a body cannot be the stored request's, whose body was valid.
 */
function fingerprint(req: Request, error: unknown, problems: readonly ErrorDetail[]): string | undefined {
  if ((error instanceof ApiError && error.code === 'invalid_json') || tooDeep(problems)) return undefined;
  try {
    return requestHash(req.method, req.path, req.body);
  } catch {
    return undefined; // deeper than the walk can go, past the early checks' count of problems
  }
}

/**
 * The 400s decided before the handler: the body reader's (`invalid_json`), the validator's, and the early checks'
 * (characters, depth, a missing body) that the handler adapter raises. A handler's own 400 went through
 * `runIdempotent`, which compared the key already.
 */
function refusedBeforeHandler(error: unknown, res: Response): boolean {
  if (error instanceof ApiError) {
    if (error.status !== 400) return false;
    return error.code === 'invalid_json' || Boolean((res.locals.problems as ErrorDetail[] | undefined)?.length);
  }
  const refusal = error as { status?: unknown; errors?: unknown };
  return refusal?.status === 400 && Array.isArray(refusal.errors);
}

/**
 * Runs `execute` once per key, in one transaction with the stored reply. `execute` gets the transaction's
 * `Db` to do all its work with. Returns the reply and whether it is a replay.
 */
export async function runIdempotent(
  db: Db,
  pool: pg.Pool,
  timing: IdempotencyTiming,
  scope: Scope,
  execute: (db: Db) => Promise<StoredReply>,
  /** What of the reply is written to the store (secrets are left out). */
  toKeep: (reply: StoredReply) => StoredReply = (reply) => reply,
): Promise<{ reply: StoredReply; replayed: boolean }> {
  const owner = randomUUID();
  const lease = sql<Date>`now() + ${`${timing.leaseMs} milliseconds`}::interval`;
  const deadline = Date.now() + timing.waitMs;
  for (;;) {
    // Forget an expired use of this key before claiming it.
    await db
      .deleteFrom('idempotency_keys')
      .where(tenantIs(scope))
      .where('idempotency_key', '=', scope.key)
      .where('created_at', '<', sql<Date>`now() - ${retention}`)
      .execute();
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({
        ...tenantColumns(scope),
        idempotency_key: scope.key,
        request_hash: scope.hash,
        state: 'running',
        response_status: null,
        response_body: null,
        lease_owner: owner,
        lease_expires_at: lease,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('state')
      .executeTakeFirst();
    if (claimed) {
      const reply = await executeAndKeep(db, pool, scope, owner, execute, toKeep);
      if (reply) return { reply, replayed: false };
      continue; // taken over between our claim and our lock (only if we stalled past the lease): look again
    }

    const existing = await db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'state', 'response_status', 'response_body'])
      .where(tenantIs(scope))
      .where('idempotency_key', '=', scope.key)
      .executeTakeFirst();
    if (!existing) continue; // released between our insert and select: try to claim again
    if (existing.request_hash !== scope.hash) throw idempotencyConflict();
    if (existing.state === 'done' && existing.response_status !== null) {
      return { reply: { status: existing.response_status, body: existing.response_body }, replayed: true };
    }
    if (await takeOver(db, scope, owner, lease, timing.leaseMs)) {
      const reply = await executeAndKeep(db, pool, scope, owner, execute, toKeep);
      if (reply) return { reply, replayed: false };
      continue;
    }
    if (Date.now() > deadline) {
      throw new ApiError(
        409,
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still running. Retry after the Retry-After seconds.',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Takes a running key over when no transaction holds its row (SKIP LOCKED: a locked row belongs to a request
 * that is still running) and its lease has lapsed, or it was claimed before PostgreSQL last started: a restart
 * or crash of the database ended every transaction, so the claimant cannot be between its claim and its lock
 * any more (if it is still alive, it finds the key taken when it locks, and looks again). A client retrying
 * through a database restart gets its reply as soon as the database is back, not a lease later. On Citus the
 * start is the coordinator's, whose restart also ends every transaction; a worker's falls back to the lease.
 */
async function takeOver(
  db: Db,
  scope: Scope,
  owner: string,
  lease: ReturnType<typeof sql<Date>>,
  leaseMs: number,
): Promise<boolean> {
  const result = await sql<{ idempotency_key: string }>`
    update idempotency_keys set lease_owner = ${owner}, lease_expires_at = ${lease}
    where (organization_id, environment, idempotency_key) = (
      select organization_id, environment, idempotency_key from idempotency_keys
      where ${tenantIs(scope)} and idempotency_key = ${scope.key}
        and state = 'running' and request_hash = ${scope.hash}
        and (lease_expires_at < now()
          or lease_expires_at - ${`${leaseMs} milliseconds`}::interval < pg_postmaster_start_time())
      for update skip locked)
    returning idempotency_key`.execute(db);
  return result.rows.length === 1;
}

class NotOurs extends Error {}

async function executeAndKeep(
  db: Db,
  pool: pg.Pool,
  scope: Scope,
  owner: string,
  execute: (db: Db) => Promise<StoredReply>,
  toKeep: (reply: StoredReply) => StoredReply,
): Promise<StoredReply | undefined> {
  const release = () =>
    db
      .deleteFrom('idempotency_keys')
      .where(tenantIs(scope))
      .where('idempotency_key', '=', scope.key)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'running')
      .execute();
  let reply: StoredReply;
  try {
    reply = await inPinnedTransaction(pool, async (tx) => {
      // Hold the row for the whole request: while this transaction lives, nobody can take the key over.
      const mine = await sql`select 1 from idempotency_keys
        where ${tenantIs(scope)} and idempotency_key = ${scope.key}
          and lease_owner = ${owner} and state = 'running' for update`.execute(tx);
      if (mine.rows.length === 0) throw new NotOurs();
      const result = await execute(tx);
      // A server error keeps nothing: its writes are rolled back with it, and the key is released below.
      if (result.status >= 500) throw new Rollback(result);
      await tx
        .updateTable('idempotency_keys')
        .set({
          state: 'done',
          response_status: result.status,
          response_body: JSON.stringify(toKeep(result).body),
          lease_owner: null,
          lease_expires_at: null,
        })
        .where(tenantIs(scope))
        .where('idempotency_key', '=', scope.key)
        .execute();
      return result;
    });
  } catch (error) {
    if (error instanceof NotOurs) return undefined;
    // Released so that a retry runs at once. When the request's connection was cut (a killed backend), idle ones of
    // the pool may be dead too until their loss is noticed: try a few times, a moment apart. A commit that happened
    // after all left the key `done`, which stays. A database that is gone keeps the claim, which a retry takes over
    // once the database has restarted (takeOver) or the lease has lapsed.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (
        await release().then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw error;
  }
  if (reply.status >= 500) await release();
  return reply;
}

export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const result = await acrossTenants(db, "the maintenance.cleanup job forgets every tenant's expired keys")
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - ${retention}`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
