/**
 * The fields a targeting filter may name, and how each compares. Column fields map to the snake_case columns
 * shared by `respondents` and the recipient snapshots (`distribution_recipients`); custom attributes are
 * `attributes.<name>` inside the jsonb `attributes` column.
 */
export type ColumnField =
  | 'externalId'
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'department'
  | 'location'
  | 'jobTitle'
  | 'managerId'
  | 'hireDate'
  | 'employmentType'
  | 'language';

/**
 * `text` compares as text; `email` too, but equals/in ignore case; `date` as a date; `enum` as text of a closed list.
 */
export type FieldKind = 'text' | 'email' | 'date' | 'enum';

export interface ColumnFieldInfo {
  column: string;
  kind: FieldKind;
}

export const columnFields: Readonly<Record<ColumnField, ColumnFieldInfo>> = {
  externalId: { column: 'external_id', kind: 'text' },
  email: { column: 'email', kind: 'email' },
  firstName: { column: 'first_name', kind: 'text' },
  lastName: { column: 'last_name', kind: 'text' },
  department: { column: 'department', kind: 'text' },
  location: { column: 'location', kind: 'text' },
  jobTitle: { column: 'job_title', kind: 'text' },
  managerId: { column: 'manager_id', kind: 'text' },
  hireDate: { column: 'hire_date', kind: 'date' },
  employmentType: { column: 'employment_type', kind: 'enum' },
  language: { column: 'language', kind: 'text' },
};

export const employmentTypes = ['full_time', 'part_time', 'contractor', 'temporary', 'intern'] as const;

export const attributePrefix = 'attributes.';
const attributeName = /^[A-Za-z0-9_]{1,64}$/;

export type FieldRef =
  { type: 'column'; field: ColumnField; info: ColumnFieldInfo } | { type: 'attribute'; name: string };

/** What a filter's `field` refers to, or undefined when it names nothing a respondent has. */
export function resolveField(field: string): FieldRef | undefined {
  if (Object.hasOwn(columnFields, field)) {
    const name = field as ColumnField;
    return { type: 'column', field: name, info: columnFields[name] };
  }
  if (field.startsWith(attributePrefix)) {
    const name = field.slice(attributePrefix.length);
    if (attributeName.test(name)) return { type: 'attribute', name };
  }
  return undefined;
}

/** A calendar date `YYYY-MM-DD` that exists (no 2026-02-30), within PostgreSQL's `date` range for 4-digit years. */
export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
