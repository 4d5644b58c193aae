/**
 * Compiles a checked targeting into one parameterised SQL condition with Kysely's `sql` tag: identifiers go
 * through `sql.ref`, every value is a bind parameter, nothing is concatenated into SQL text. The condition is
 * written the way an index wants it (`department = $1`, `lower(email) in (…)`, `attributes @> $1` for the GIN
 * index), so PostgreSQL can use the respondent indexes.
 *
 * The compiler is parameterised over the table it targets (`TargetShape`): `respondents` at preview and send
 * time, recipient snapshots (`distribution_recipients`, same column names) for analytics segments.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import { validationFailed } from '../../http/index.js';
import { columnFields, type ColumnField, type FieldRef } from './fields.js';
import { checkTargeting, type CheckedFilter, type CheckedTargeting } from './validate.js';

export interface TargetShape {
  /** The table name or alias in the query's FROM clause; columns are referenced as `<alias>.<column>`. */
  alias: string;
  /** Column names where they differ from `respondents`' (`attributes` is the jsonb column of custom attributes). */
  columns?: Partial<Record<ColumnField | 'attributes', string>>;
  /**
   * The tenant whose current manager hierarchy `under` walks. Only targets over the respondents as they are now
   * have one; over a snapshot (analytics) `under` is refused, since today's chains would not be the snapshot's.
   */
  hierarchy?: Tenant;
}

export const respondentsTarget: TargetShape = { alias: 'respondents' };

/** The respondents of `tenant` as they are now (preview and send), `under` included. */
export const respondentsOf = (tenant: Tenant): TargetShape => ({ ...respondentsTarget, hierarchy: tenant });
export const recipientsTarget: TargetShape = { alias: 'distribution_recipients' };

/** `%`, `_` and `\` are LIKE wildcards/escape; a `contains` value matches them literally. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function columnRef(target: TargetShape, field: ColumnField) {
  return sql.ref(`${target.alias}.${target.columns?.[field] ?? columnFields[field].column}`);
}

function attributesRef(target: TargetShape) {
  return sql.ref(`${target.alias}.${target.columns?.attributes ?? 'attributes'}`);
}

const comparison = { gte: sql.raw('>='), lte: sql.raw('<=') } as const;

/**
 * `under`: the respondents whose chain of managers contains `manager`, walked down from them by a recursive CTE
 * over the `(organization_id, environment, manager_id)` index, every step scoped by the tenant (so Citus routes
 * the whole statement to the tenant's shard). UNION, not UNION ALL: a respondent already found is not walked
 * again, so a cycle that SQL wrote past the writer's refusal ends the walk. The manager themselves is left out,
 * also when such a cycle leads back to them, or when they are their own manager (the top of the tree, read as
 * having none: respondents' `managerOf`).
 *
 * `= any(array(…))`, not `in (…)`: PostgreSQL cannot know how many people the walk finds (it plans for a few
 * hundred), so `in` becomes one primary-key probe per person in hash order, which for a whole company cost more
 * than the walk itself. The array is one value computed once; the outer scan then reads the key index once in key
 * order for all of them (which also gives a preview its order by `external_id` without a sort). BENCHMARKS.md,
 * "Manager hierarchy", has the numbers.
 */
function compileUnder(manager: string, target: TargetShape): RawBuilder<SqlBool> {
  const tenant = target.hierarchy;
  if (!tenant) throw new Error(`targeting: under needs the tenant's hierarchy (target ${target.alias})`);
  return sql<SqlBool>`${columnRef(target, 'externalId')} = any(array(
    with recursive under_below (external_id) as (
      select under_r.external_id from respondents under_r
      where ${tenantIs(tenant, 'under_r')} and under_r.manager_id = ${manager}
      union
      select under_r.external_id from respondents under_r join under_below b on under_r.manager_id = b.external_id
      where ${tenantIs(tenant, 'under_r')}
    )
    select external_id from under_below where external_id <> ${manager}))`;
}

function compileColumn(
  filter: CheckedFilter,
  field: Extract<FieldRef, { type: 'column' }>,
  target: TargetShape,
): RawBuilder<SqlBool> {
  const column = columnRef(target, field.field);
  const kind = field.info.kind;
  // Parameters are typed explicitly where PostgreSQL could not infer them (dates, function arguments).
  const param = (value: string | number | boolean) => (kind === 'date' ? sql`cast(${value} as date)` : sql`${value}`);
  switch (filter.operator) {
    case 'under':
      return compileUnder(filter.value, target);
    case 'exists':
      return filter.value ? sql<SqlBool>`${column} is not null` : sql<SqlBool>`${column} is null`;
    case 'equals':
      // Matches the expression index on lower(email).
      if (kind === 'email') return sql<SqlBool>`lower(${column}) = lower(cast(${filter.value} as text))`;
      return sql<SqlBool>`${column} = ${param(filter.value)}`;
    case 'in': {
      if (kind === 'email')
        return sql<SqlBool>`lower(${column}) in (${sql.join(filter.value.map((v) => sql`lower(cast(${v} as text))`))})`;
      return sql<SqlBool>`${column} in (${sql.join(filter.value.map(param))})`;
    }
    case 'contains':
      return sql<SqlBool>`${column} ilike ${`%${escapeLike(filter.value)}%`}`;
    case 'gte':
    case 'lte':
      return sql<SqlBool>`${column} ${comparison[filter.operator]} ${param(filter.value)}`;
  }
}

function compileAttribute(filter: CheckedFilter, name: string, target: TargetShape): RawBuilder<SqlBool> {
  const attributes = attributesRef(target);
  const value = sql`(${attributes} -> cast(${name} as text))`;
  const text = sql`(${attributes} ->> cast(${name} as text))`;
  // Containment (`@>`) is what the GIN (jsonb_path_ops) index answers; it compares JSON type and value.
  const contains = (v: string | number | boolean) =>
    sql<SqlBool>`${attributes} @> cast(${JSON.stringify({ [name]: v })} as jsonb)`;
  switch (filter.operator) {
    case 'under':
      throw new Error('targeting: under is checked to name managerId only');
    case 'exists':
      // ->> is SQL NULL for a missing key and for a JSON null alike.
      return filter.value ? sql<SqlBool>`${text} is not null` : sql<SqlBool>`${text} is null`;
    case 'equals':
      return contains(filter.value);
    case 'in':
      return filter.value.length === 1
        ? contains(filter.value[0]!)
        : sql<SqlBool>`(${sql.join(filter.value.map(contains), sql` or `)})`;
    case 'contains':
      return sql<SqlBool>`(jsonb_typeof(${value}) = 'string' and ${text} ilike ${`%${escapeLike(filter.value)}%`})`;
    case 'gte':
    case 'lte': {
      const op = comparison[filter.operator];
      // CASE, not AND: SQL does not promise to test the type before it casts.
      if (typeof filter.value === 'number') {
        return sql<SqlBool>`(case when jsonb_typeof(${value}) = 'number' then cast(${value} as numeric) ${op} cast(${String(filter.value)} as numeric) end)`;
      }
      return sql<SqlBool>`(case when jsonb_typeof(${value}) = 'string' then ${text} ${op} cast(${filter.value} as text) end)`;
    }
  }
}

function compileFilter(filter: CheckedFilter, target: TargetShape): RawBuilder<SqlBool> {
  return filter.field.type === 'column'
    ? compileColumn(filter, filter.field, target)
    : compileAttribute(filter, filter.field.name, target);
}

/** The condition of a checked targeting over `target`. No filters: `true` (everyone matches). */
export function compileChecked(
  targeting: CheckedTargeting,
  target: TargetShape = respondentsTarget,
): RawBuilder<SqlBool> {
  if (targeting.filters.length === 0) return sql<SqlBool>`true`;
  const parts = targeting.filters.map((filter) => compileFilter(filter, target));
  if (parts.length === 1) return parts[0]!;
  return sql<SqlBool>`(${sql.join(parts, targeting.logic === 'OR' ? sql` or ` : sql` and `)})`;
}

/**
 * Checks a targeting against the type rules and compiles it for `target`; a targeting that breaks the rules
 * throws the API's 400 `validation_failed`, every problem naming its filter by index under `basePath`.
 */
export function compileTargeting(
  targeting: unknown,
  target: TargetShape = respondentsTarget,
  basePath = '/body/targeting',
): RawBuilder<SqlBool> {
  const checked = checkTargeting(targeting, basePath);
  if (!checked.ok) throw validationFailed(checked.problems);
  if (!target.hierarchy) {
    const problems = checked.targeting.filters.flatMap((filter, i) =>
      filter.operator === 'under'
        ? [
            {
              path: `${basePath}/filters/${i}/operator`,
              code: 'invalid_value',
              message: `filter ${i}: under is for the respondents as they are now (a distribution's preview and send); analytics break results down by a manager's organization with segmentBy=managerTree`,
            },
          ]
        : // The copies of respondents that analytics read hold no language: a response has its own.
          filter.field.type === 'column' && filter.field.field === 'language'
          ? [
              {
                path: `${basePath}/filters/${i}/field`,
                code: 'invalid_value',
                message: `filter ${i}: language is for a distribution's audience; analytics do not filter by the respondent's language`,
              },
            ]
          : [],
    );
    if (problems.length > 0) throw validationFailed(problems);
  }
  return compileChecked(checked.targeting, target);
}
