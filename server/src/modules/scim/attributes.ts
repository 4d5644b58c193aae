/**
 * The User attributes the service keeps, by their canonical path, and where each lives in SQL: filters and sorting
 * compile to these columns of `scim_users s` joined with `respondents r`. Attribute names are case-insensitive
 * (RFC 7643 §2.1); extension attributes are named with their schema's URN.
 */
import { sql, type RawBuilder } from 'kysely';

export const coreSchema = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const enterpriseSchema = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const ownSchema = 'urn:ietf:params:scim:schemas:extension:survey-service:2.0:User';

export type SchemaName = 'core' | 'enterprise' | 'own';
export type AttributeType = 'string' | 'caseExactString' | 'boolean' | 'date' | 'dateTime';

export interface AttributePath {
  schema: SchemaName;
  /** Lower-case, dotted: `name.familyname`, `manager.value`. */
  attr: string;
}

/** `urn:…:enterprise:2.0:User:manager.value` → { enterprise, manager.value }; names without a URN are core. */
export function attributePath(path: string): AttributePath {
  const lower = path.toLowerCase();
  for (const [schema, urn] of [
    ['enterprise', enterpriseSchema],
    ['own', ownSchema],
    ['core', coreSchema],
  ] as const) {
    const prefix = `${urn.toLowerCase()}:`;
    if (lower.startsWith(prefix)) return { schema, attr: lower.slice(prefix.length) };
  }
  return { schema: 'core', attr: lower };
}

/** Keys of custom attributes, as the respondent keeps them (`RespondentAttributes`). */
const customKey = /^[A-Za-z0-9_]{1,64}$/;

/**
 * What a path names among the custom attributes (`urn:…:survey-service:2.0:User:attributes.costCenter`): the key as
 * written, since keys are data and compare exactly as respondents keep them (as PATCH paths take them); `''` for
 * `attributes` as a whole. Undefined for any other path, a key no respondent can have included (its path then names
 * nothing the service keeps).
 */
export function customAttributeOf(path: string): { key: string } | undefined {
  const prefix = `${ownSchema}:attributes`;
  if (path.length < prefix.length || path.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase())
    return undefined;
  const rest = path.slice(prefix.length);
  if (rest === '') return { key: '' };
  return rest.startsWith('.') && customKey.test(rest.slice(1)) ? { key: rest.slice(1) } : undefined;
}

export const keyOf = (path: AttributePath) => (path.schema === 'core' ? path.attr : `${path.schema}:${path.attr}`);

interface Column {
  sql: RawBuilder<unknown>;
  type: AttributeType;
}

const ref = (name: string) => sql.ref(name);

/** Filterable and sortable single-valued attributes. */
export const columns: Record<string, Column> = {
  id: { sql: ref('s.id'), type: 'caseExactString' },
  externalid: { sql: ref('s.external_id'), type: 'caseExactString' },
  username: { sql: ref('s.user_name'), type: 'string' },
  'name.givenname': { sql: ref('r.first_name'), type: 'string' },
  'name.familyname': { sql: ref('r.last_name'), type: 'string' },
  title: { sql: ref('r.job_title'), type: 'string' },
  active: { sql: ref('s.active'), type: 'boolean' },
  preferredlanguage: { sql: ref('s.preferred_language'), type: 'string' },
  'enterprise:department': { sql: ref('r.department'), type: 'string' },
  'enterprise:employeenumber': { sql: ref('s.employee_number'), type: 'string' },
  'enterprise:manager': { sql: ref('r.manager_id'), type: 'caseExactString' },
  'enterprise:manager.value': { sql: ref('r.manager_id'), type: 'caseExactString' },
  'own:location': { sql: ref('r.location'), type: 'string' },
  'own:hiredate': { sql: ref('r.hire_date'), type: 'date' },
  'own:employmenttype': { sql: ref('r.employment_type'), type: 'caseExactString' },
  'meta.created': { sql: ref('s.created_at'), type: 'dateTime' },
  'meta.lastmodified': { sql: sql`greatest(s.updated_at, r.updated_at)`, type: 'dateTime' },
  'meta.resourcetype': { sql: sql`'User'::text`, type: 'caseExactString' },
};

/**
 * `emails` is multi-valued: a filter on it holds when one address matches (RFC 7644 §3.4.2.2), so its
 * sub-attributes are members of one address, `scim_email.v`, an element of `scim_users.emails` (filter.ts wraps the
 * condition in an `exists` over them). `emails` compared as a whole is its `value`.
 */
export const emailColumns: Record<string, Column> = {
  value: { sql: sql`(scim_email.v ->> 'value')`, type: 'string' },
  type: { sql: sql`(scim_email.v ->> 'type')`, type: 'string' },
  primary: { sql: sql`coalesce(scim_email.v -> 'primary' = 'true'::jsonb, false)`, type: 'boolean' },
  display: { sql: sql`(scim_email.v ->> 'display')`, type: 'string' },
};

/**
 * Sorting by `emails` (or its `value`) sorts by the address the respondent keeps: the primary one (RFC 7644 §3.4.2.3).
 */
export const designatedEmailColumn: Column = { sql: ref('r.email'), type: 'string' };
