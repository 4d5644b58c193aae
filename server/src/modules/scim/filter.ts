/**
 * SCIM filters (RFC 7644 §3.4.2.2) compiled to one SQL condition over `scim_users s` joined with `respondents r`:
 * the database filters, never the process. Parsing is `scim2-parse-filter`'s (the whole grammar: comparisons,
 * `pr`, `and`/`or`/`not`, parentheses, value filters); each comparison becomes a parameterised, null-safe condition
 * on the attribute's column, or on the key's value in `r.attributes` for a custom attribute. Text compares
 * case-insensitively except on case-exact attributes (`id`, `externalId`). The multi-valued `emails` is every
 * address the user has: a comparison on it holds when one address matches, and a value filter
 * (`emails[type eq "work" and value ew "@acme.test"]`) when one address matches all of it.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import scimFilter from 'scim2-parse-filter';
import { attributePath, columns, customAttributeOf, designatedEmailColumn, emailColumns, keyOf } from './attributes.js';
import { invalidFilter } from './errors.js';

type Filter = ReturnType<typeof scimFilter.parse>;

/**
 * Whether `text` has a sub-attribute after a value filter (`emails[type eq "home"].value eq "x"`), outside string
 * literals. RFC 7644's filter grammar has none (PATCH paths do); the parser reads it as `emails[type eq "home"] and
 * emails.value eq "x"`, which holds for a user whose home address is another than "x".
 */
function subAttributeAfterValueFilter(text: string): boolean {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ']' && text[i + 1] === '.') return true;
  }
  return false;
}

export function parseFilter(text: string): Filter {
  if (subAttributeAfterValueFilter(text))
    throw invalidFilter(
      'A filter names no sub-attribute after a value filter: write emails[type eq "work" and value eq "…"].',
    );
  try {
    return scimFilter.parse(text);
  } catch (error) {
    throw invalidFilter(`The filter is not valid SCIM: ${(error as Error).message}`.slice(0, 500));
  }
}

const orderOperators: Partial<Record<string, string>> = { gt: '>', ge: '>=', lt: '<', le: '<=' };

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

interface Column {
  sql: RawBuilder<unknown>;
  type: (typeof columns)[string]['type'];
}

/** Where a path's values are: a column of the user, or (`address`) a member of one of its e-mail addresses. */
function column(path: string, inEmails: boolean): Column & { address: boolean } {
  const shown = path.slice(0, 200);
  if (inEmails) {
    const found = emailColumns[path.toLowerCase()];
    if (!found) throw invalidFilter(`emails has no sub-attribute ${shown}.`);
    return { ...found, address: true };
  }
  const key = keyOf(attributePath(path));
  if (key === 'emails' || key.startsWith('emails.')) {
    const found = emailColumns[key === 'emails' ? 'value' : key.slice('emails.'.length)];
    if (!found) throw invalidFilter(`emails has no sub-attribute ${shown}.`);
    return { ...found, address: true };
  }
  const found = columns[key];
  if (!found) throw invalidFilter(`The filter names an attribute the service does not keep: ${shown}`);
  return { ...found, address: false };
}

/** One of the user's e-mail addresses (`scim_email.v`) meets `condition`. */
function anyEmail(condition: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from jsonb_array_elements(s.emails) as scim_email(v) where ${condition})`;
}

/**
 * A custom attribute's comparison. Values keep their JSON type (string, number, boolean, null), and a comparison
 * matches only values of its own type: `attributes.level gt 2` compares numbers, `attributes.costCenter sw "cc"`
 * text (ignoring case, as SCIM's strings do), `eq true` booleans. A missing key and a JSON null are both absent.
 * Equality with a number or boolean is containment (`@>`), which the GIN index of `attributes` answers.
 */
function customComparison(key: string, op: string, value: unknown, path: string): RawBuilder<SqlBool> {
  const shown = path.slice(0, 200);
  if (key === '') throw invalidFilter(`${shown} is complex: compare one of its keys, as in attributes.costCenter.`);
  const attributes = sql.ref('r.attributes');
  const json = sql`(${attributes} -> ${key}::text)`;
  const text = sql`(${attributes} ->> ${key}::text)`;
  if (value === null) {
    if (op === 'eq') return sql<SqlBool>`(${text} is null)`;
    if (op === 'ne') return sql<SqlBool>`(${text} is not null)`;
    throw invalidFilter(`${op} cannot compare with null (${shown}).`);
  }
  if (typeof value === 'boolean' || typeof value === 'number') {
    const contains = sql<SqlBool>`(${attributes} @> ${JSON.stringify({ [key]: value })}::jsonb)`;
    if (op === 'eq') return contains;
    if (op === 'ne') return sql<SqlBool>`(not ${contains})`;
    const operator = orderOperators[op];
    if (typeof value === 'boolean' || !operator)
      throw invalidFilter(
        `${op} does not apply to ${typeof value === 'boolean' ? 'a boolean' : 'a number'} (${shown}).`,
      );
    // CASE, not AND: SQL does not promise to test the type before it casts.
    return sql<SqlBool>`coalesce(case when jsonb_typeof(${json}) = 'number' then ${json}::numeric ${sql.raw(operator)} ${String(value)}::numeric end, false)`;
  }
  if (typeof value !== 'string') throw invalidFilter(`${shown} takes a string, a number, a boolean or null.`);
  const lowered = value.toLowerCase();
  const isText = sql`jsonb_typeof(${json}) = 'string'`;
  const like = (pattern: string) => sql<SqlBool>`coalesce(${isText} and lower(${text}) like ${pattern}, false)`;
  switch (op) {
    case 'eq':
      return sql<SqlBool>`coalesce(${isText} and lower(${text}) = ${lowered}, false)`;
    case 'ne':
      return sql<SqlBool>`(not coalesce(${isText} and lower(${text}) = ${lowered}, false))`;
    case 'co':
      return like(`%${escapeLike(lowered)}%`);
    case 'sw':
      return like(`${escapeLike(lowered)}%`);
    case 'ew':
      return like(`%${escapeLike(lowered)}`);
    default: {
      const operator = orderOperators[op];
      if (!operator) throw invalidFilter(`${op} does not apply to ${shown}.`);
      return sql<SqlBool>`coalesce(${isText} and lower(${text}) ${sql.raw(operator)} ${lowered}, false)`;
    }
  }
}

/** A custom attribute is present when its key holds a value other than null and the empty string. */
function customPresent(key: string): RawBuilder<SqlBool> {
  const attributes = sql.ref('r.attributes');
  if (key === '') return sql<SqlBool>`(${attributes} <> '{}'::jsonb)`;
  const type = sql`jsonb_typeof(${attributes} -> ${key}::text)`;
  return sql<SqlBool>`coalesce(${type} <> 'null' and (${type} <> 'string' or (${attributes} ->> ${key}::text) <> ''), false)`;
}

/** A comparison; `prefix` is the multi-valued attribute a value filter is inside (its condition is per address). */
function comparison(filter: Extract<Filter, { compValue: unknown }>, prefix: string): RawBuilder<SqlBool> {
  const path = filter.attrPath;
  const custom = prefix ? undefined : customAttributeOf(path);
  if (custom) return customComparison(custom.key, filter.op, filter.compValue, path);
  const found = column(path, prefix !== '');
  const condition = columnComparison(found, filter.op, filter.compValue, prefix ? `${prefix}.${path}` : path);
  return found.address && !prefix ? anyEmail(condition) : condition;
}

function columnComparison(found: Column, op: string, value: unknown, path: string): RawBuilder<SqlBool> {
  const { sql: col, type } = found;
  if (value === null) {
    if (op === 'eq') return sql<SqlBool>`(${col} is null)`;
    if (op === 'ne') return sql<SqlBool>`(${col} is not null)`;
    throw invalidFilter(`${op} cannot compare with null (${path.slice(0, 200)}).`);
  }
  if (type === 'boolean') {
    if (typeof value !== 'boolean')
      throw invalidFilter(`${path.slice(0, 200)} is a boolean: compare it with true or false.`);
    if (op === 'eq') return sql<SqlBool>`(${col} is not distinct from ${value})`;
    if (op === 'ne') return sql<SqlBool>`(${col} is distinct from ${value})`;
    throw invalidFilter(`${op} does not apply to the boolean ${path.slice(0, 200)}.`);
  }
  if (typeof value !== 'string') throw invalidFilter(`${path.slice(0, 200)} takes a string value.`);
  if (type === 'date' || type === 'dateTime') {
    const parsed = type === 'date' ? /^\d{4}-\d{2}-\d{2}$/.test(value) : !Number.isNaN(Date.parse(value));
    if (!parsed || Number.isNaN(Date.parse(value)))
      throw invalidFilter(
        `${path.slice(0, 200)} takes a ${type === 'date' ? 'date (YYYY-MM-DD)' : 'date-time'} value.`,
      );
    const typed = type === 'date' ? sql`${value}::date` : sql`${new Date(value).toISOString()}::timestamptz`;
    return ordered(op, col, typed, path, true);
  }
  const caseExact = type === 'caseExactString';
  const left = caseExact ? col : sql`lower(${col})`;
  const right = caseExact ? value : value.toLowerCase();
  switch (op) {
    case 'eq':
      return sql<SqlBool>`coalesce(${left} = ${right}, false)`;
    case 'ne':
      return sql<SqlBool>`(${left} is distinct from ${right})`;
    case 'co':
      return sql<SqlBool>`coalesce(${left} like ${`%${escapeLike(right)}%`}, false)`;
    case 'sw':
      return sql<SqlBool>`coalesce(${left} like ${`${escapeLike(right)}%`}, false)`;
    case 'ew':
      return sql<SqlBool>`coalesce(${left} like ${`%${escapeLike(right)}`}, false)`;
    default:
      return ordered(op, left, sql`${right}`, path, false);
  }
}

function ordered(op: string, left: RawBuilder<unknown>, right: RawBuilder<unknown>, path: string, allowEq: boolean) {
  if (allowEq && op === 'eq') return sql<SqlBool>`coalesce(${left} = ${right}, false)`;
  if (allowEq && op === 'ne') return sql<SqlBool>`(${left} is distinct from ${right})`;
  const operator = orderOperators[op];
  if (!operator) throw invalidFilter(`${op} does not apply to ${path.slice(0, 200)}.`);
  return sql<SqlBool>`coalesce(${left} ${sql.raw(operator)} ${right}, false)`;
}

/** How deeply `and`/`or`/`not` may nest: deeper would only exhaust PostgreSQL's stack. */
const maxDepth = 64;

/** The filter as one SQL condition; `prefix` is the multi-valued attribute a value filter is inside. */
export function compileFilter(filter: Filter, prefix = '', depth = 0): RawBuilder<SqlBool> {
  if (depth > maxDepth) throw invalidFilter(`The filter nests deeper than ${maxDepth} levels.`);
  switch (filter.op) {
    case 'and':
    case 'or': {
      const parts = filter.filters.map((part) => compileFilter(part, prefix, depth + 1));
      return sql<SqlBool>`(${sql.join(parts, sql.raw(filter.op === 'and' ? ' and ' : ' or '))})`;
    }
    case 'not':
      return sql<SqlBool>`(not ${compileFilter(filter.filter, prefix, depth + 1)})`;
    case '[]': {
      if (prefix) throw invalidFilter('Value filters do not nest.');
      const attr = attributePath(filter.attrPath);
      if (attr.schema !== 'core' || attr.attr !== 'emails')
        throw invalidFilter(`Only emails takes a value filter here, not ${filter.attrPath.slice(0, 200)}.`);
      // One address meets the whole value filter.
      return anyEmail(compileFilter(filter.valFilter, 'emails', depth + 1));
    }
    case 'pr': {
      const custom = prefix ? undefined : customAttributeOf(filter.attrPath);
      if (custom) return customPresent(custom.key);
      const found = column(filter.attrPath, prefix !== '');
      const { sql: col, type } = found;
      const present =
        type === 'boolean' || type === 'date' || type === 'dateTime'
          ? sql<SqlBool>`(${col} is not null)`
          : sql<SqlBool>`coalesce(${col}::text <> '', false)`;
      return found.address && !prefix ? anyEmail(present) : present;
    }
    default:
      return comparison(filter as Extract<Filter, { compValue: unknown }>, prefix);
  }
}

/** The column a sort names (text sorted case-insensitively), or invalidValue-like refusal via invalidFilter. */
export function sortColumn(path: string): RawBuilder<unknown> {
  const key = keyOf(attributePath(path));
  const found = key === 'emails' || key === 'emails.value' ? designatedEmailColumn : columns[key];
  if (!found) throw invalidFilter(`sortBy names an attribute the service does not keep: ${path.slice(0, 200)}`);
  return found.type === 'string' ? sql`lower(${found.sql})` : found.sql;
}
