/**
 * The tenant scope, and its one owner. Every tenant table carries `organization_id` and `environment`, and the
 * filter on both is the security boundary between customers — one missing comparison shows a customer another's
 * data — and the distribution column a sharded database (Citus) routes each query by. So the scope is written
 * here and nowhere else:
 *
 * - `tenantIs(tenant, alias?)` in every WHERE (or a join's ON) that scopes rows to a tenant, in Kysely's
 *   `.where(…)` and inside `sql` templates alike;
 * - `tenantColumns(tenant)` for the tenant's columns of an inserted row (`.values({ ...tenantColumns(tenant), … })`);
 * - `tenantOf(caller)` for the tenant of a key or a job's data, `tenantOfRow(row)` for the tenant of a row read
 *   without one (a claimed queue row, an expired export).
 *
 * A query that deliberately reads or writes across tenants — a maintenance job (expiry, clean-up, compaction,
 * folding), a queue that serves every tenant, a lookup that FINDS the tenant (an API key by its hash), a row
 * addressed by a globally unique id the caller got from the queue — runs on `acrossTenants(db, 'why')`: the same
 * database, named so that review sees the query is unscoped on purpose, and why. `grep -rn acrossTenants` lists
 * them all; any other query on a tenant table without `tenantIs` is a bug. Comparing two tables' tenant columns
 * in a join (`r.organization_id = s.organization_id`) is a join key, not a scope, and stays as SQL.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Environment } from './columns.js';

/** Whose data a query may touch: every query that serves a caller is scoped by both. */
export interface Tenant {
  organizationId: string;
  environment: Environment;
}

const column = (alias: string | undefined, name: 'organization_id' | 'environment') =>
  sql.ref(alias === undefined ? name : `${alias}.${name}`);

/**
 * `("organization_id" = $1 and "environment" = $2)`, of the table `alias` when given. A plain `column = $param`
 * per column, so every (organization_id, environment, …) index serves it, and the same text at each call site
 * (prepared statements). Parenthesised, so that it stays one condition next to an `or`.
 */
export function tenantIs(tenant: Tenant, alias?: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${column(alias, 'organization_id')} = ${tenant.organizationId} and ${column(alias, 'environment')} = ${tenant.environment})`;
}

/**
 * The tenant's organization in both environments: only for facts that are organization-wide by design (an
 * unsubscribed address is mailed by neither LIVE nor TEST). The environments are listed, so the tenant-led
 * indexes still serve it.
 */
export function organizationIs(tenant: Tenant, alias?: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${column(alias, 'organization_id')} = ${tenant.organizationId} and ${column(alias, 'environment')} in ('LIVE', 'TEST'))`;
}

/** The tenant's columns of a row to insert (or upsert). */
export function tenantColumns(tenant: Tenant): { organization_id: string; environment: Environment } {
  return { organization_id: tenant.organizationId, environment: tenant.environment };
}

/**
 * The tenant of whatever carries one: a caller's key, a job's data. A copy of the two fields only, so that
 * nothing else of the carrier travels with the tenant.
 */
export function tenantOf(owner: Tenant): Tenant {
  return { organizationId: owner.organizationId, environment: owner.environment };
}

/** The tenant a row belongs to. */
export function tenantOfRow(row: { organization_id: string; environment: Environment }): Tenant {
  return { organizationId: row.organization_id, environment: row.environment };
}

/**
 * Marks a query that is not scoped to one tenant, on purpose: returns `db` itself. `why` says what makes the
 * query legitimately cross-tenant, for the reader; it changes nothing at run time.
 */
export function acrossTenants<D>(db: D, why: string): D {
  void why;
  return db;
}
