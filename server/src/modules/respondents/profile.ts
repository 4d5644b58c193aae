/**
 * The profile an HR system keeps of a person, and every copy of it: the respondent, a distribution's frozen audience
 * (its recipients), a privacy access file, a SCIM User. One statement of its columns, how a query reads them, and
 * how they appear in the contract, so that a field added to the profile is added once.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Respondent } from '../../generated/openapi.js';

/** The profile as a row holds it (the database's names). */
export interface ProfileRow {
  first_name: string | null;
  last_name: string | null;
  department: string | null;
  location: string | null;
  job_title: string | null;
  manager_id: string | null;
  /** A `date`, read as text (`hire_date::text`) so that no time zone ever shifts it. */
  hire_date: string | null;
  employment_type: Respondent['employmentType'];
  attributes: Record<string, unknown>;
}

/** The profile in the contract's names: members of a Respondent, and a recipient's `snapshot`. */
export type Profile = Pick<
  Respondent,
  | 'firstName'
  | 'lastName'
  | 'department'
  | 'location'
  | 'jobTitle'
  | 'managerId'
  | 'hireDate'
  | 'employmentType'
  | 'attributes'
>;

/** The profile's columns for a Kysely select, `hire_date` as text (a `date` never passes through a JS Date). */
export const profileSelection = [
  'first_name',
  'last_name',
  'department',
  'location',
  'job_title',
  'manager_id',
  sql<string | null>`hire_date::text`.as('hire_date'),
  'employment_type',
  'attributes',
] as const;

/** The profile's columns for a hand-written select, of the table aliased `alias` when given, `hire_date` as text. */
export function profileSelect(alias?: string): RawBuilder<unknown> {
  const prefix = alias ? `${alias}.` : '';
  return sql.raw(
    profileSelection
      .map((column) => (typeof column === 'string' ? `${prefix}${column}` : `${prefix}hire_date::text as hire_date`))
      .join(', '),
  );
}

export function toProfile(row: ProfileRow): Profile {
  return {
    firstName: row.first_name,
    lastName: row.last_name,
    department: row.department,
    location: row.location,
    jobTitle: row.job_title,
    managerId: row.manager_id,
    hireDate: row.hire_date,
    employmentType: row.employment_type,
    attributes: row.attributes as Profile['attributes'],
  };
}
