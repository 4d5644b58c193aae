/** The SCIM module's table: what a SCIM client knows of a respondent beyond the respondent's fields. */
import type { ColumnType } from 'kysely';
import type { CreatedAt, Environment, Timestamp } from '../../db/columns.js';

export interface ScimUsersTable {
  organization_id: string;
  environment: Environment;
  /** `usr_…`, assigned on creation, never changed. */
  id: string;
  /** The respondent's key; the row goes when the respondent does (foreign key, cascade). */
  external_id: string;
  user_name: string;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  preferred_language: string | null;
  employee_number: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ScimTables {
  scim_users: ScimUsersTable;
}
