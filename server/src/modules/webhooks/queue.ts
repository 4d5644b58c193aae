/**
 * The delivery queue's SQL. Pending rows of `webhook_deliveries` are the queue: a dispatcher claims due rows
 * with FOR UPDATE SKIP LOCKED (several worker processes never take the same row), stamping a lease and a claim
 * token; the outcome is written only under that token. A worker killed mid-attempt leaves its rows pending with
 * a lease that runs out, after which any dispatcher claims them again — at-least-once, same `webhook-id`.
 */
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { acrossTenants, tenantColumns, tenantIs, tenantOfRow } from '../../db/tenant.js';
import type { EventType } from '../events/index.js';
import { wakeDispatchers } from '../events/index.js';
import { newId } from '../../lib/ids.js';
import { cancelPendingDeliveries, disableWebhook } from './repository.js';

export interface ClaimedDelivery {
  organization_id: string;
  environment: Environment;
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  manual: boolean;
  claim_token: string;
  /** Where the claimed row version is: the success update finds it without an index (see recordSuccesses). */
  row_ctid: string;
  event_created_at: Date;
  /** The event's data as JSON text, put into the body as is. */
  event_data: string;
  url: string;
  enabled: boolean;
  failing_since: Date | null;
  /** Secrets that sign now: the current one first, then a previous one inside its overlap window. */
  secrets: string[];
}

/**
 * The columns a claim returns, `d` being the claimed row, `e` its event and `w` its webhook; `now` the clock
 * that decides which secrets still sign (a value on Citus, which allows no clock function in RETURNING).
 */
const claimedColumns = (
  now: RawBuilder<Date>,
) => sql`d.organization_id, d.environment, d.id, d.webhook_id, d.event_id, d.event_type, d.attempt,
  d.manual, d.claim_token, d.ctid::text as row_ctid, e.created_at as event_created_at, e.data::text as event_data,
  w.url, w.enabled, w.failing_since,
  array(
    select s.secret from webhook_secrets s
    where s.organization_id = d.organization_id and s.environment = d.environment and s.webhook_id = d.webhook_id
      and (s.expires_at is null or s.expires_at > ${now})
    order by s.created_at desc
  ) as secrets`;

/**
 * Claims up to `limit` due rows, oldest first. On one PostgreSQL (`sharded` false) in one statement: the due rows
 * locked with FOR UPDATE SKIP LOCKED, so concurrent dispatchers each take other rows, and joined back by `ctid`
 * (locked by this statement, so stable within it): a join by key let the planner pick a per-tenant index scan
 * per row, quadratic in a tenant's backlog.
 *
 * On Citus (`sharded`), which refuses FOR UPDATE in a statement over several shards, in two: the oldest due rows
 * of every shard are read without a lock, then taken by one UPDATE that checks each row again under its row
 * lock (still pending, lease free), so two dispatchers that read the same rows never both take one: the second
 * waits for the first's row lock, then finds the lease taken and skips the row. Both statements run on every
 * shard, in parallel; nothing else in the queue needs a lock across tenants.
 */
export async function claimDue(
  db: Db,
  limit: number,
  leaseMs: number,
  excludeWebhooks: string[],
  sharded = false,
): Promise<ClaimedDelivery[]> {
  const token = randomUUID();
  const queue = acrossTenants(db, "the dispatchers' queue: due deliveries of every tenant");
  if (sharded) return claimDueOnShards(queue, token, limit, leaseMs, excludeWebhooks);
  const { rows } = await sql<ClaimedDelivery>`
    with due as (
      select ctid from webhook_deliveries
      where status = 'pending' and due_at <= now() and (lease_until is null or lease_until < now())
        and not (webhook_id = any(${excludeWebhooks}::text[]))
      order by due_at
      limit ${limit}
      for update skip locked
    )
    update webhook_deliveries d
    set lease_until = now() + make_interval(secs => ${leaseMs / 1000}), claim_token = ${token}
    from due, events e, webhooks w
    where d.ctid = due.ctid
      and e.organization_id = d.organization_id and e.environment = d.environment and e.id = d.event_id
      and w.organization_id = d.organization_id and w.environment = d.environment and w.id = d.webhook_id
    returning ${claimedColumns(sql<Date>`now()`)}`.execute(queue);
  return rows;
}

async function claimDueOnShards(
  db: Db,
  token: string,
  limit: number,
  leaseMs: number,
  excludeWebhooks: string[],
): Promise<ClaimedDelivery[]> {
  const { rows: due } = await sql<{ organization_id: string; environment: Environment; id: string; now: Date }>`
    select organization_id, environment, id, now() as now from webhook_deliveries
    where status = 'pending' and due_at <= now() and (lease_until is null or lease_until < now())
      and not (webhook_id = any(${excludeWebhooks}::text[]))
    order by due_at
    limit ${limit}`.execute(db);
  if (due.length === 0) return [];
  // The clock is read once by the first statement and passed on as a value: Citus sends a multi-shard update to
  // the shards' nodes as it is, and each would otherwise read its own.
  const now = due[0]!.now;
  const { rows } = await sql<ClaimedDelivery>`
    update webhook_deliveries d
    set lease_until = ${new Date(now.getTime() + leaseMs)}::timestamptz, claim_token = ${token}
    from events e, webhooks w
    where (d.organization_id, d.environment, d.id) in (
        select * from unnest(${due.map((row) => row.organization_id)}::text[], ${due.map((row) => row.environment)}::text[],
          ${due.map((row) => row.id)}::text[]))
      and d.status = 'pending' and (d.lease_until is null or d.lease_until < ${now}::timestamptz)
      and e.organization_id = d.organization_id and e.environment = d.environment and e.id = d.event_id
      and w.organization_id = d.organization_id and w.environment = d.environment and w.id = d.webhook_id
    returning ${claimedColumns(sql<Date>`${now}::timestamptz`)}`.execute(db);
  return rows;
}

/** Milliseconds until the next pending row becomes claimable (due, lease run out), or undefined when none. */
export async function msUntilNextDue(db: Db): Promise<number | undefined> {
  const { rows } = await sql<{ ms: number | null }>`
    select extract(epoch from min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000 as ms
    from webhook_deliveries where status = 'pending'`.execute(
    acrossTenants(db, "the dispatchers' queue: the next due delivery of any tenant"),
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : Math.max(0, Number(ms));
}

export interface Outcome {
  succeeded: boolean;
  responseStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  excerpt: string | null;
}

function finishAttempt(db: DbOrTx, row: ClaimedDelivery, outcome: Outcome) {
  return db
    .updateTable('webhook_deliveries')
    .set({
      status: outcome.succeeded ? 'succeeded' : 'failed',
      response_status: outcome.responseStatus,
      latency_ms: outcome.latencyMs,
      error: outcome.error,
      response_excerpt: outcome.excerpt,
      delivered_at: sql`now()`,
      lease_until: null,
    })
    .where(tenantIs(tenantOfRow(row)))
    .where('id', '=', row.id)
    .where('claim_token', '=', row.claim_token)
    .where('status', '=', 'pending');
}

export interface Success {
  row: ClaimedDelivery;
  outcome: Outcome;
  at: Date;
}

/**
 * Successes, many in one statement (the dispatcher gathers them for a few milliseconds): one UPDATE per batch
 * instead of one per delivery is what lets a worker keep up with thousands of deliveries a second. Rows are found
 * by the `ctid` the claim returned: nothing else updates a row while its lease runs (cancelling skips leased
 * rows), and the id, claim token and status are checked too, so a moved row is at worst not recorded — it then
 * runs again after its lease (at-least-once). A join by key let the planner pick a per-tenant index scan per row
 * while the table's statistics lagged a burst. Webhooks that were failing have their failure clock stopped.
 *
 * On one PostgreSQL the batch never waits for a row lock (`SKIP LOCKED`): it holds the rows it has updated while it
 * goes on, and a webhook's deletion deletes that webhook's deliveries in its own order, so waiting for one of them
 * could close a cycle (a deadlock, whose victim may be the API's DELETE). A row locked by someone else is being
 * deleted, or claimed again after its lease ran out; either way this success is not its to record. Citus refuses
 * a row lock in a statement over several shards (`sharded`): there the batch updates as before.
 */
export async function recordSuccesses(db: Db, successes: readonly Success[], sharded = false): Promise<void> {
  if (successes.length === 0) return;
  const column = <T>(pick: (s: Success) => T) => successes.map(pick);
  const batch = sql`unnest(
      ${column((s) => s.row.row_ctid)}::tid[], ${column((s) => s.row.id)}::text[],
      ${column((s) => s.row.claim_token)}::text[], ${column((s) => s.outcome.responseStatus)}::int[], ${column((s) => s.outcome.latencyMs)}::int[],
      ${column((s) => s.outcome.excerpt)}::text[], ${column((s) => s.at.toISOString())}::timestamptz[]
    ) as u(row_ctid, id, claim_token, response_status, latency_ms, excerpt, delivered_at)`;
  const set = sql`set status = 'succeeded', response_status = u.response_status, latency_ms = u.latency_ms,
      error = null, response_excerpt = u.excerpt, delivered_at = u.delivered_at, lease_until = null`;
  const queue = acrossTenants(
    db,
    'a batch of claimed deliveries of any tenants, each row found by its ctid and claim token',
  );
  if (sharded) {
    await sql`
      update webhook_deliveries d ${set}
      from ${batch}
      where d.ctid = u.row_ctid and d.id = u.id and d.claim_token = u.claim_token and d.status = 'pending'`.execute(
      queue,
    );
  } else {
    await sql`
      with u as (
        select d.ctid as locked, u.* from webhook_deliveries d, ${batch}
        where d.ctid = u.row_ctid and d.id = u.id and d.claim_token = u.claim_token and d.status = 'pending'
        for update of d skip locked
      )
      update webhook_deliveries d ${set}
      from u
      where d.ctid = u.locked`.execute(queue);
  }
  for (const { row } of successes) {
    if (row.failing_since === null) continue;
    await db
      .updateTable('webhooks')
      .set({ failing_since: null })
      .where(tenantIs(tenantOfRow(row)))
      .where('id', '=', row.webhook_id)
      .execute();
  }
}

export interface FailurePlan {
  /** 410 Gone: disable the webhook. */
  gone: boolean;
  /** Delay before the next attempt, when the schedule has one (ignored for manual attempts). */
  retryDelayMs: number | undefined;
  /** Five days without a success disable the webhook. */
  disableAfterMs: number;
  /** Not sent at all (the webhook was disabled meanwhile): recorded, nothing else. */
  cancelled?: boolean;
}

export interface FailureRecord {
  recorded: boolean;
  nextRetryAt: Date | null;
  disabled: 'endpoint_gone' | 'failing' | null;
}

/**
 * A failure, in one transaction: the row; the webhook's failure clock; then either disabling the webhook (410, or
 * failing for five days — which cancels its scheduled retries) or the next attempt, queued as a pending row due at
 * `nextRetryAt`. The unique (webhook, event, attempt) index makes a retry queued twice one retry.
 */
export async function recordFailure(
  db: Db,
  row: ClaimedDelivery,
  outcome: Outcome,
  plan: FailurePlan,
): Promise<FailureRecord> {
  return db.transaction().execute(async (tx) => {
    // The webhook's row first, then its delivery: the order a deletion of the webhook takes them (the row, then its
    // deliveries by cascade), so the two wait for each other in turn, never in a cycle.
    await tx
      .selectFrom('webhooks')
      .select('id')
      .where(tenantIs(tenantOfRow(row)))
      .where('id', '=', row.webhook_id)
      .forUpdate()
      .execute();
    const finished = await finishAttempt(tx, row, outcome).returning('delivered_at').executeTakeFirst();
    if (!finished) return { recorded: false, nextRetryAt: null, disabled: null };
    // An attempt cancelled because the webhook is disabled says nothing about the endpoint.
    if (plan.cancelled) return { recorded: true, nextRetryAt: null, disabled: null };
    const tenant = tenantOfRow(row);
    // The failure clock starts with the first failure, then the webhook is read under its lock: two statements,
    // since Citus refuses a clock function inside COALESCE in a distributed update, and one in RETURNING.
    await tx
      .updateTable('webhooks')
      .set({ failing_since: sql`now()` })
      .where(tenantIs(tenant))
      .where('id', '=', row.webhook_id)
      .where('failing_since', 'is', null)
      .execute();
    const webhook = await tx
      .selectFrom('webhooks')
      .select([
        'enabled',
        'failing_since',
        sql<boolean>`failing_since <= now() - make_interval(secs => ${plan.disableAfterMs / 1000})`.as(
          'failed_too_long',
        ),
      ])
      .where(tenantIs(tenant))
      .where('id', '=', row.webhook_id)
      .forUpdate()
      .executeTakeFirst();
    if (!webhook) return { recorded: true, nextRetryAt: null, disabled: null };
    const disable = plan.gone
      ? 'endpoint_gone'
      : webhook.failed_too_long && row.event_type !== 'webhook.test'
        ? 'failing'
        : null;
    if (disable) {
      if (await disableWebhook(tx, tenant, row.webhook_id, disable))
        await cancelPendingDeliveries(tx, tenant, row.webhook_id);
      return { recorded: true, nextRetryAt: null, disabled: disable };
    }
    if (row.manual || !webhook.enabled || plan.retryDelayMs === undefined)
      return { recorded: true, nextRetryAt: null, disabled: null };
    // Counted from the attempt's recorded time, so `nextRetryAt - deliveredAt` is the schedule's delay exactly,
    // however long the statements between took.
    const nextRetryAt = new Date(finished.delivered_at!.getTime() + plan.retryDelayMs);
    await tx
      .updateTable('webhook_deliveries')
      .set({ next_retry_at: nextRetryAt })
      .where(tenantIs(tenant))
      .where('id', '=', row.id)
      .execute();
    await tx
      .insertInto('webhook_deliveries')
      .values({
        ...tenantColumns(tenant),
        id: newId('whd'),
        webhook_id: row.webhook_id,
        event_id: row.event_id,
        event_type: row.event_type,
        attempt: row.attempt + 1,
        due_at: nextRetryAt,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
    if (plan.retryDelayMs === 0) await wakeDispatchers(tx);
    return { recorded: true, nextRetryAt, disabled: null };
  });
}
