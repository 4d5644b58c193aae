/**
 * Column types shared by every module's tables.ts: the plan and environment enums and the timestamp shapes.
 * They live apart from db/schema.ts, which assembles the tables, so that no table file imports its assembler.
 */
import type { ColumnType } from 'kysely';

export type Plan = 'FREE' | 'STARTER' | 'PRO' | 'BUSINESS';
export type Environment = 'LIVE' | 'TEST';

export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
