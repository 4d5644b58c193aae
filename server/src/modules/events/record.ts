/**
 * Writing an event. Every feature calls `recordEvent` inside the transaction of the change the event describes
 * (a transactional outbox): a rolled-back change leaves no event, a committed one exactly one, even if the
 * process dies right after the commit. The same statement fans the event out: one pending delivery per enabled
 * webhook of the tenant subscribed to its type (or to `*`), in the same transaction, so a committed event always
 * has its deliveries. The webhook dispatchers (modules/webhooks/dispatcher.ts) are woken on commit.
 */
import { sql } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { Tenant } from '../../db/schema.js';
import type { DbOrTx } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import type { EventType } from './tables.js';

export type Event = components['schemas']['Event'];

/** The `data` each event type carries (the contract's table in EventType). */
export interface EventData {
  'survey.launched': components['schemas']['Survey'];
  'survey.paused': components['schemas']['Survey'];
  'survey.closed': components['schemas']['Survey'];
  'response.submitted': components['schemas']['Response'];
  'respondents.sync.completed': components['schemas']['SyncJob'];
  'respondents.sync.failed': components['schemas']['SyncJob'];
  'responses.export.completed': components['schemas']['Export'];
  'analytics.ai.completed': components['schemas']['AiAnalysis'];
  'distribution.sent': components['schemas']['Distribution'];
  'webhook.test': components['schemas']['WebhookTestData'];
}

export interface RecordedEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  createdAt: string;
  data: EventData[T];
}

/** The channel the webhook dispatchers LISTEN on; a NOTIFY is delivered when the transaction commits. */
export const deliveryWakeChannel = 'survey_service_webhooks';

/** Stores one event in `tx`, the transaction of the change it describes, queues its deliveries and returns it. */
export async function recordEvent<T extends EventType>(tx: DbOrTx, tenant: Tenant, type: T, data: EventData[T]): Promise<RecordedEvent<T>> {
  const id = newId('evt');
  // One round trip when nobody is subscribed: the insert and the lookup of subscribers. `webhook.test` goes
  // only to the webhook being tested (webhooks/service.ts), never to subscribers.
  const { rows } = await sql<{ created_at: Date; webhook_ids: string[] }>`
    with inserted as (
      insert into events (organization_id, environment, id, type, data)
      values (${tenant.organizationId}, ${tenant.environment}, ${id}, ${type}, ${JSON.stringify(data)}::jsonb)
      returning created_at
    )
    select inserted.created_at, array(
      select w.id from webhooks w
      where w.organization_id = ${tenant.organizationId} and w.environment = ${tenant.environment} and w.enabled
        and ${type} <> 'webhook.test' and (w.events @> array[${type}]::text[] or w.events @> array['*']::text[])
    ) as webhook_ids
    from inserted`.execute(tx);
  const row = rows[0]!;
  if (row.webhook_ids.length > 0) await queueDeliveries(tx, tenant, id, type, row.webhook_ids);
  return { id, type, createdAt: row.created_at.toISOString(), data };
}

/** Pending first attempts of one event to these webhooks; the dispatchers wake up when `tx` commits. */
export async function queueDeliveries(
  tx: DbOrTx,
  tenant: Tenant,
  eventId: string,
  eventType: EventType,
  webhookIds: readonly string[],
  options: { manual?: boolean; attempt?: number } = {},
): Promise<string[]> {
  const ids = webhookIds.map(() => newId('whd'));
  await tx
    .insertInto('webhook_deliveries')
    .values(
      webhookIds.map((webhookId, i) => ({
        organization_id: tenant.organizationId,
        environment: tenant.environment,
        id: ids[i]!,
        webhook_id: webhookId,
        event_id: eventId,
        event_type: eventType,
        attempt: options.attempt ?? 1,
        manual: options.manual ?? false,
      })),
    )
    .execute();
  await sql`select pg_notify(${deliveryWakeChannel}, '')`.execute(tx);
  return ids;
}
