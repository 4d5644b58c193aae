/**
 * Writing an event. Every feature calls `recordEvent` inside the transaction of the change the event describes
 * (a transactional outbox): a rolled-back change leaves no event, a committed one exactly one, even if the
 * process dies right after the commit. The same call fans the event out: one pending delivery per enabled
 * webhook of the tenant subscribed to its type (or to `*`), in the same transaction, so a committed event always
 * has its deliveries. The webhook dispatchers (modules/webhooks/dispatcher.ts) are woken on commit.
 */
import { sql } from 'kysely';
import type {
  AiAnalysis,
  Distribution,
  Event,
  Export,
  PrivacyRequest,
  Response,
  Survey,
  SyncJob,
  WebhookTestData,
} from '../../generated/openapi.js';
import { tenantColumns, type Tenant } from '../../db/tenant.js';
import type { DbOrTx } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import type { EventType } from './tables.js';

export type { Event };

/** The `data` each event type carries (the contract's table in EventType). */
export interface EventData {
  'survey.launched': Survey;
  'survey.paused': Survey;
  'survey.closed': Survey;
  'response.submitted': Response;
  'respondents.sync.completed': SyncJob;
  'respondents.sync.failed': SyncJob;
  'responses.export.completed': Export;
  'analytics.ai.completed': AiAnalysis;
  'distribution.sent': Distribution;
  'privacy_request.completed': PrivacyRequest;
  'webhook.test': WebhookTestData;
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
 * THE event writer is the SQL function `record_event` (sql/20_record_event.sql): it stores the event and queues
 * its deliveries in one call, and the submission's own function (`store_response`) calls it too, so every event
 * is written by the same statements. It returns how many deliveries it queued, and the caller wakes the
 * dispatchers when there are any (`wakeDispatchers`): a NOTIFY inside the function would be sent by whichever node
 * runs it, which on Citus is the tenant's worker, not the coordinator the dispatchers listen on.
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

/** Wakes the webhook dispatchers when `tx` commits (they LISTEN), for deliveries it queued. */
export async function wakeDispatchers(tx: DbOrTx): Promise<void> {
  await sql`select pg_notify(${deliveryWakeChannel}, '')`.execute(tx);
}

/**
 * Stores one event in `tx`, the transaction of the change it describes, queues its deliveries (one call of
 * `record_event`, one round trip) and returns it.
 */
export async function recordEvent<T extends EventType>(
  tx: DbOrTx,
  tenant: Tenant,
  type: T,
  data: EventData[T],
): Promise<RecordedEvent<T>> {
  const id = newId('evt');
  const { rows } = await sql<{ created_at: Date; queued: number }>`
    select created_at, queued
    from record_event(${tenant.organizationId}, ${tenant.environment}, ${id}, ${type}, ${JSON.stringify(data)}::jsonb)`.execute(
    tx,
  );
  if (rows[0]!.queued > 0) await wakeDispatchers(tx);
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
