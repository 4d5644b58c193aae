/**
 * The SCIM module's table: what a SCIM client knows of a respondent beyond the respondent's fields. Every respondent
 * has its row: SCIM writes it with the respondents it creates, and the respondents' writer with those it creates
 * (respondents/scim-users.ts).
 */
import type { ColumnType } from 'kysely';
import type { CreatedAt, Environment, Timestamp } from '../../db/columns.js';

/** One of a user's e-mail addresses, as kept in `scim_users.emails`. */
export interface ScimEmail {
  value: string;
  type?: string;
  primary: boolean;
  display?: string;
}

export interface ScimUsersTable {
  organization_id: string;
  environment: Environment;
  /** `usr_…`, assigned with the row, never changed. */
  id: string;
  /** The respondent's key; the row goes when the respondent does (deleted with it by the respondents' writer). */
  external_id: string;
  user_name: string;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  preferred_language: string | null;
  employee_number: string | null;
  /** The user's addresses as SCIM shows them; the designated one is the respondent's `email` (user.ts). */
  emails: ColumnType<ScimEmail[], string | undefined, string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ScimTables {
  scim_users: ScimUsersTable;
}
