/** All SQL of webhook subscriptions, secrets and the delivery history (the queue's SQL is in queue.ts). */
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
import type { EventType } from '../events/index.js';
import type { DeliveryStatus, DisabledReason, WebhookDeliveriesTable, WebhooksTable } from './tables.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export async function insertWebhook(
  db: DbOrTx,
  tenant: Tenant,
  values: { id: string; url: string; events: string[]; description: string | null; enabled: boolean; secret: string },
): Promise<WebhookRow> {
  const row = await db
    .insertInto('webhooks')
    .values({
      ...tenantColumns(tenant),
      id: values.id,
      url: values.url,
      events: values.events,
      description: values.description,
      enabled: values.enabled,
      disabled_reason: values.enabled ? null : 'manual',
      disabled_at: values.enabled ? null : new Date(),
      updated_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .insertInto('webhook_secrets')
    .values({ ...tenantColumns(tenant), webhook_id: values.id, secret: values.secret })
    .execute();
  return row;
}

export function findWebhook(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<WebhookRow | undefined> {
  let query = db.selectFrom('webhooks').selectAll().where(tenantIs(tenant)).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listWebhooks(db: DbOrTx, tenant: Tenant, page: { limit: number; offset: number }) {
  const base = db.selectFrom('webhooks').where(tenantIs(tenant));
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

export async function updateWebhook(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  changes: WebhookChanges,
): Promise<WebhookRow | undefined> {
  const set: Record<string, unknown> = { updated_at: new Date() };
  if (changes.url !== undefined) set.url = changes.url;
  if (changes.events !== undefined) set.events = changes.events;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.enabled === true)
    Object.assign(set, { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
  if (changes.enabled === false) {
    // A manual disable of an enabled webhook records when and why, by a statement of its own (Citus refuses a
    // clock function inside CASE in a distributed update); one already disabled keeps its reason and time.
    await db
      .updateTable('webhooks')
      .set({ disabled_reason: 'manual', disabled_at: sql`now()` })
      .where(tenantIs(tenant))
      .where('id', '=', id)
      .where('enabled', '=', true)
      .execute();
    set.enabled = false;
  }
  return db
    .updateTable('webhooks')
    .set(set)
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Disables a webhook (410, five days of failures); returns whether it was enabled. */
export async function disableWebhook(db: DbOrTx, tenant: Tenant, id: string, reason: DisabledReason): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ enabled: false, disabled_reason: reason, disabled_at: sql`now()`, updated_at: sql`now()` })
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .where('enabled', '=', true)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Cancels the scheduled retries of a disabled webhook: pending attempts not in flight fail, and the attempts
 * before them no longer announce a `nextRetryAt`. Test sends are kept (they go to disabled webhooks too).
 */
export async function cancelPendingDeliveries(db: DbOrTx, tenant: Tenant, webhookId: string): Promise<void> {
  const base = () => db.updateTable('webhook_deliveries').where(tenantIs(tenant)).where('webhook_id', '=', webhookId);
  await base()
    .set({
      status: 'failed',
      error: 'cancelled: the webhook was disabled',
      delivered_at: sql`now()`,
      next_retry_at: null,
    })
    .where('status', '=', 'pending')
    .where('event_type', '<>', 'webhook.test')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
    .execute();
  await base()
    .set({ next_retry_at: null })
    .where('status', '=', 'failed')
    .where('next_retry_at', 'is not', null)
    .execute();
}

export async function deleteWebhook(db: DbOrTx, tenant: Tenant, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where(tenantIs(tenant)).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * A new current secret; the previous current one signs until `previousExpiresAt`, and any older one stops at
 * once (at most two sign). Runs in the transaction that locked the webhook.
 */
export async function rotateSecret(
  db: DbOrTx,
  tenant: Tenant,
  webhookId: string,
  secret: string,
  previousExpiresAt: Date,
): Promise<void> {
  const mine = () => db.updateTable('webhook_secrets').where(tenantIs(tenant)).where('webhook_id', '=', webhookId);
  await mine()
    .set({ expires_at: sql`now()` })
    .where('expires_at', '>', sql<Date>`now()`)
    .execute();
  await mine().set({ expires_at: previousExpiresAt }).where('expires_at', 'is', null).execute();
  await db
    .insertInto('webhook_secrets')
    .values({ ...tenantColumns(tenant), webhook_id: webhookId, secret })
    .execute();
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  eventType?: EventType;
  createdAfter?: Date;
  createdBefore?: Date;
  limit: number;
  offset: number;
}

export async function listDeliveries(db: DbOrTx, tenant: Tenant, webhookId: string, filter: DeliveryFilter) {
  let base = db.selectFrom('webhook_deliveries').where(tenantIs(tenant)).where('webhook_id', '=', webhookId);
  if (filter.status) base = base.where('status', '=', filter.status);
  if (filter.eventType) base = base.where('event_type', '=', filter.eventType);
  if (filter.createdAfter) base = base.where('created_at', '>=', filter.createdAfter);
  if (filter.createdBefore) base = base.where('created_at', '<', filter.createdBefore);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export function findDelivery(
  db: DbOrTx,
  tenant: Tenant,
  webhookId: string,
  id: string,
): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where(tenantIs(tenant))
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findDeliveryById(db: DbOrTx, tenant: Tenant, id: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where(tenantIs(tenant))
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The next attempt number of an event to a webhook. */
export async function nextAttemptNumber(
  db: DbOrTx,
  tenant: Tenant,
  webhookId: string,
  eventId: string,
): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('attempt').as('last'))
    .where(tenantIs(tenant))
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return Number(row?.last ?? 0) + 1;
}

export async function eventExists(db: DbOrTx, tenant: Tenant, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where(tenantIs(tenant))
    .where('id', '=', eventId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Finished deliveries (succeeded or failed; a pending one is still the dispatcher's) created before `before`, for
 * retention: how many there are.
 */
export async function countFinishedDeliveriesBefore(db: DbOrTx, tenant: Tenant, before: Date): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .where(tenantIs(tenant))
    .where('status', '<>', 'pending')
    .where('created_at', '<', before)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes at most `limit` of those deliveries; how many went. */
export async function deleteFinishedDeliveriesBefore(
  db: DbOrTx,
  tenant: Tenant,
  before: Date,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from webhook_deliveries where ${tenantIs(tenant)} and id in (
      select id from webhook_deliveries
      where ${tenantIs(tenant)} and status <> 'pending' and created_at < ${before}
      order by created_at limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
