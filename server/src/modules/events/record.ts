/**
 * Writing an event. Every feature calls `recordEvent` inside the transaction of the change the event describes
 * (a transactional outbox): a rolled-back change leaves no event, a committed one exactly one, even if the
 * process dies right after the commit. The same statement fans the event out: one pending delivery per enabled
 * webhook of the tenant subscribed to its type (or to `*`), in the same transaction, so a committed event always
 * has its deliveries. The webhook dispatchers (modules/webhooks/dispatcher.ts) are woken on commit.
 */
import { sql, type RawBuilder } from 'kysely';
import type { components } from '../../generated/openapi.js';
import { tenantColumns, tenantIs, type Tenant } from '../../db/tenant.js';
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

export interface NewEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  data: EventData[T];
}

/**
 * The steps of a statement that store an event and queue its deliveries — CTEs named `event_row` and
 * `event_deliveries` — so that another statement can record its event in the same round trip (see surveys'
 * `storeResponse`). With `onlyIf`, the event is stored only when that CTE returned a row. The statement returns
 * how many deliveries it queued (`(select count(*) from event_deliveries)`), and the caller wakes the dispatchers
 * when there are any (`wakeDispatchers`): a NOTIFY inside the statement would be sent by whichever node runs it,
 * which on Citus is the tenant's worker, not the coordinator the dispatchers listen on.
 * `data`: the event's data as SQL, when the statement itself decides part of it (else `event.data`).
 *
 * Deliveries go only to webhooks that exist when the transaction commits: the fan-out locks the webhook rows it
 * reads (`FOR KEY SHARE`, the lock the foreign key's own check takes, so no new conflict) as it reads them. Reading
 * them in the same statement is not enough under READ COMMITTED: the statement's snapshot can still show a webhook
 * whose deletion commits before the foreign key is checked at the statement's end, and the insert then failed
 * (`webhook_deliveries_webhook`, a 500 of the change that recorded the event). With the lock, a deletion in
 * progress makes the fan-out wait and then skip the deleted row (PostgreSQL re-reads a locked row's latest
 * version, and a deleted one drops out), and a deletion that comes later waits for this transaction, whose
 * deliveries its cascade then removes. Disabling or editing a webhook takes no conflicting lock.
 */
export function eventSteps<T extends EventType>(
  tenant: Tenant,
  event: NewEvent<T>,
  onlyIf?: string,
  data?: RawBuilder<unknown>,
) {
  const gate = onlyIf ? sql` where exists (select 1 from ${sql.table(onlyIf)})` : sql``;
  // `webhook.test` goes only to the webhook being tested (webhooks/service.ts), never to subscribers.
  return sql`event_row as (
      insert into events (organization_id, environment, id, type, data)
      select ${tenant.organizationId}, ${tenant.environment}, ${event.id}, ${event.type}, ${data ?? sql`${JSON.stringify(event.data)}::jsonb`}${gate}
      returning organization_id, environment, id, type, created_at
    ), event_deliveries as (
      insert into webhook_deliveries (organization_id, environment, id, webhook_id, event_id, event_type, attempt, manual)
      select e.organization_id, e.environment, survey_service_id('whd'), w.id, e.id, e.type, 1, false
      from event_row e
      join webhooks w on ${tenantIs(tenant, 'w')}
      where w.enabled and e.type <> 'webhook.test' and (w.events @> array[e.type]::text[] or w.events @> array['*']::text[])
      for key share of w
      returning id
    )`;
}

/** Wakes the webhook dispatchers when `tx` commits (they LISTEN), for deliveries it queued. */
export async function wakeDispatchers(tx: DbOrTx): Promise<void> {
  await sql`select pg_notify(${deliveryWakeChannel}, '')`.execute(tx);
}

/**
 * Stores one event in `tx`, the transaction of the change it describes, queues its deliveries (one statement,
 * one round trip) and returns it.
 */
export async function recordEvent<T extends EventType>(
  tx: DbOrTx,
  tenant: Tenant,
  type: T,
  data: EventData[T],
): Promise<RecordedEvent<T>> {
  const id = newId('evt');
  const { rows } = await sql<{ created_at: Date; queued: string }>`
    with ${eventSteps(tenant, { id, type, data })}
    select event_row.created_at, (select count(*) from event_deliveries) as queued from event_row`.execute(tx);
  if (Number(rows[0]!.queued) > 0) await wakeDispatchers(tx);
  return { id, type, createdAt: rows[0]!.created_at.toISOString(), data };
}

/**
 * Pending first attempts of one event to these webhooks; the dispatchers wake up when `tx` commits. The caller
 * holds each webhook's row lock (test sends and redeliveries lock it first), so none is deleted under the insert.
 */
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
        ...tenantColumns(tenant),
        id: ids[i]!,
        webhook_id: webhookId,
        event_id: eventId,
        event_type: eventType,
        attempt: options.attempt ?? 1,
        manual: options.manual ?? false,
      })),
    )
    .execute();
  await wakeDispatchers(tx);
  return ids;
}
