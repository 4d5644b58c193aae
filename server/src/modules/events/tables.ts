/** The event log's table (see migrations/2026-11-24T0100_events.ts). */
import type { ColumnType } from 'kysely';
import type { EventType } from '../../generated/openapi.js';
import type { CreatedAt, Environment } from '../../db/columns.js';

export type { EventType };

export interface EventsTable {
  organization_id: string;
  environment: Environment;
  id: string;
  type: EventType;
  /** jsonb sent as JSON text (see surveys/tables.ts). */
  data: ColumnType<unknown, string, never>;
  created_at: CreatedAt;
}

export interface EventTables {
  events: EventsTable;
}
