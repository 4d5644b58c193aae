/** The rules of webhooks: subscriptions, secrets, tests and redeliveries, and rows mapped to the contract. */
import { randomBytes } from 'node:crypto';
import type { Webhook, WebhookCreate, WebhookDelivery, WebhookUpdate } from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { tenantColumns } from '../../db/tenant.js';
import { idOrNotFound, invalidState, notFound, validationFailed, type ErrorDetail } from '../../http/index.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { queueDeliveries } from '../events/index.js';
import type { EventType } from '../events/index.js';
import { checkWebhookUrl } from './address-guard.js';
import * as repo from './repository.js';
import type { DeliveryFilter, DeliveryRow, WebhookRow } from './repository.js';

/** How long the previous secret keeps signing after a rotation. */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** Event types a webhook may subscribe to: every type but `webhook.test` (sent only on request). */
export const subscribableTypes: readonly EventType[] = [
  'survey.launched',
  'survey.paused',
  'survey.closed',
  'response.submitted',
  'respondents.sync.completed',
  'respondents.sync.failed',
  'responses.export.completed',
  'analytics.ai.completed',
  'distribution.sent',
  'privacy_request.completed',
];

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as Webhook['events'],
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: iso(row.disabled_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    latencyMs: row.latency_ms,
    error: row.error,
    responseExcerpt: row.response_excerpt,
    createdAt: iso(row.created_at),
    deliveredAt: iso(row.delivered_at),
    nextRetryAt: iso(row.next_retry_at),
  };
}

/** `whsec_` + base64 of 32 bytes from the CSPRNG, the Standard Webhooks form. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function eventProblems(events: readonly string[]): ErrorDetail[] {
  const valid = `valid types: ${subscribableTypes.join(', ')}, or ["*"] alone for all`;
  if (events.includes('*') && events.length > 1)
    return [{ path: '/body/events', code: 'invalid_value', message: `"*" stands alone; ${valid}` }];
  return events.flatMap((type, i) =>
    type === '*' || subscribableTypes.includes(type as EventType)
      ? []
      : [
          {
            path: `/body/events/${i}`,
            code: 'enum',
            message:
              type === 'webhook.test'
                ? `webhook.test cannot be subscribed to (it is sent only by POST /api/v1/webhooks/{id}/test); ${valid}`
                : `unknown event type "${type}"; ${valid}`,
          },
        ],
  );
}

async function urlProblems(url: string | undefined, allowLoopback: boolean): Promise<ErrorDetail[]> {
  if (url === undefined) return [];
  const problem = await checkWebhookUrl(url, allowLoopback);
  return problem ? [{ path: '/body/url', code: 'invalid_value', message: problem }] : [];
}

export async function createWebhook(
  db: Db,
  tenant: Tenant,
  body: WebhookCreate,
  allowLoopback: boolean,
): Promise<{ webhook: Webhook; secret: string }> {
  const problems = [...(await urlProblems(body.url, allowLoopback)), ...eventProblems(body.events)];
  if (problems.length > 0) throw validationFailed(problems);
  const secret = newSecret();
  const row = await db.transaction().execute((tx) =>
    repo.insertWebhook(tx, tenant, {
      id: newId('whk'),
      url: body.url,
      events: [...body.events],
      description: body.description ?? null,
      enabled: body.enabled ?? true,
      secret,
    }),
  );
  return { webhook: toWebhook(row), secret };
}

export async function findWebhookOrThrow(db: Db, tenant: Tenant, id: string): Promise<WebhookRow> {
  const row = await repo.findWebhook(db, tenant, id);
  if (!row) throw notFound('webhook', id);
  return row;
}

export async function updateWebhook(
  db: Db,
  tenant: Tenant,
  id: string,
  body: WebhookUpdate,
  allowLoopback: boolean,
): Promise<Webhook> {
  const problems = [
    ...(await urlProblems(body.url, allowLoopback)),
    ...(body.events ? eventProblems(body.events) : []),
  ];
  if (problems.length > 0) throw validationFailed(problems);
  const row = await db.transaction().execute(async (tx) => {
    const updated = await repo.updateWebhook(tx, tenant, id, {
      url: body.url,
      events: body.events ? [...body.events] : undefined,
      description: body.description,
      enabled: body.enabled,
    });
    if (updated && body.enabled === false) await repo.cancelPendingDeliveries(tx, tenant, id);
    return updated;
  });
  if (!row) throw notFound('webhook', id);
  return toWebhook(row);
}

export async function rotateSecret(db: Db, tenant: Tenant, id: string) {
  const secret = newSecret();
  const previousSecretExpiresAt = new Date(Date.now() + SECRET_OVERLAP_MS);
  await db.transaction().execute(async (tx) => {
    if (!(await repo.findWebhook(tx, tenant, id, { forUpdate: true }))) throw notFound('webhook', id);
    await repo.rotateSecret(tx, tenant, id, secret, previousSecretExpiresAt);
  });
  return { webhookId: id, secret, previousSecretExpiresAt: previousSecretExpiresAt.toISOString() };
}

/** A `webhook.test` event (listed by listEvents) delivered to this webhook only, enabled or not; one attempt. */
export async function sendTest(db: Db, tenant: Tenant, id: string): Promise<WebhookDelivery> {
  const deliveryId = await db.transaction().execute(async (tx) => {
    if (!(await repo.findWebhook(tx, tenant, id, { forUpdate: true }))) throw notFound('webhook', id);
    const eventId = newId('evt');
    const data = { webhookId: id, message: 'This is a test event from Survey Service.' };
    await tx
      .insertInto('events')
      .values({
        ...tenantColumns(tenant),
        id: eventId,
        type: 'webhook.test',
        data: JSON.stringify(data),
      })
      .execute();
    const [queued] = await queueDeliveries(tx, tenant, eventId, 'webhook.test', [id], { manual: true });
    return queued!;
  });
  return toDelivery((await repo.findDeliveryById(db, tenant, deliveryId))!);
}

/** One more attempt of a delivery's event (same event id, next attempt number), not retried automatically. */
export async function redeliver(
  db: Db,
  tenant: Tenant,
  webhookIdParam: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const webhookId = webhookIdOrThrow(webhookIdParam);
  idOrNotFound('whd', 'delivery', deliveryId);
  const id = await db.transaction().execute(async (tx) => {
    // The webhook's row lock orders concurrent redeliveries, so attempt numbers never collide.
    const webhook = await repo.findWebhook(tx, tenant, webhookId, { forUpdate: true });
    if (!webhook) throw notFound('webhook', webhookId);
    const delivery = await repo.findDelivery(tx, tenant, webhookId, deliveryId);
    if (!delivery) throw notFound('delivery', deliveryId);
    if (!webhook.enabled && delivery.event_type !== 'webhook.test') {
      throw invalidState(
        `Webhook ${webhookId} is disabled (${webhook.disabled_reason ?? 'manual'}); enable it before redelivering.`,
      );
    }
    if (!(await repo.eventExists(tx, tenant, delivery.event_id))) throw notFound('event', delivery.event_id);
    const attempt = await repo.nextAttemptNumber(tx, tenant, webhookId, delivery.event_id);
    if (attempt > 100)
      throw invalidState(
        `Event ${delivery.event_id} has had 100 attempts to webhook ${webhookId}; no more redeliveries.`,
      );
    const [queued] = await queueDeliveries(tx, tenant, delivery.event_id, delivery.event_type, [webhookId], {
      manual: true,
      attempt,
    });
    return queued!;
  });
  return toDelivery((await repo.findDeliveryById(db, tenant, id))!);
}

export const webhookIdOrThrow = (id: string) => idOrNotFound('whk', 'webhook', id);

export async function listWebhooks(
  db: Db,
  tenant: Tenant,
  page: { limit: number; offset: number },
): Promise<{ webhooks: Webhook[]; total: number }> {
  const { rows, total } = await repo.listWebhooks(db, tenant, page);
  return { webhooks: rows.map(toWebhook), total };
}

export async function getWebhook(db: Db, tenant: Tenant, id: string): Promise<Webhook> {
  return toWebhook(await findWebhookOrThrow(db, tenant, webhookIdOrThrow(id)));
}

export async function deleteWebhook(db: Db, tenant: Tenant, id: string): Promise<void> {
  if (!(await repo.deleteWebhook(db, tenant, webhookIdOrThrow(id)))) throw notFound('webhook', id);
}

/** A webhook's deliveries, newest first (404 when the webhook does not exist, rather than an empty page). */
export async function listDeliveries(
  db: Db,
  tenant: Tenant,
  webhookId: string,
  filter: DeliveryFilter,
): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
  const id = webhookIdOrThrow(webhookId);
  await findWebhookOrThrow(db, tenant, id);
  const { rows, total } = await repo.listDeliveries(db, tenant, id, filter);
  return { deliveries: rows.map(toDelivery), total };
}

export async function getDelivery(
  db: Db,
  tenant: Tenant,
  webhookId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const id = webhookIdOrThrow(webhookId);
  idOrNotFound('whd', 'delivery', deliveryId);
  const row = await repo.findDelivery(db, tenant, id, deliveryId);
  if (!row) throw notFound('delivery', deliveryId);
  return toDelivery(row);
}
