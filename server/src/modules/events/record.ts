/**
 * Writing an event. Every feature calls `recordEvent` inside the transaction of the change the event describes
 * (a transactional outbox): a rolled-back change leaves no event, a committed one exactly one, even if the
 * process dies right after the commit. Delivery to webhooks starts from these rows.
 */
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

/** Stores one event in `tx`, the transaction of the change it describes, and returns it as delivered. */
export async function recordEvent<T extends EventType>(tx: DbOrTx, tenant: Tenant, type: T, data: EventData[T]): Promise<RecordedEvent<T>> {
  const id = newId('evt');
  const row = await tx
    .insertInto('events')
    .values({ organization_id: tenant.organizationId, environment: tenant.environment, id, type, data: JSON.stringify(data) })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  return { id, type, createdAt: row.created_at.toISOString(), data };
}
