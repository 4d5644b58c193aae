/** `GET /Users`: the filter and the order compiled to SQL, one page read, `attributes` applied to that page only. */
import { sql } from 'kysely';
import { compileFilter, parseFilter, sortColumn } from './filter.js';
import { listUsers as repoList } from './repository.js';
import type { Caller } from './service.js';
import { locationOf } from './service.js';
import { project, render, type ScimUser } from './user.js';

/** The most users one page holds (ServiceProviderConfig `filter.maxResults`). */
export const maxResults = 1000;
const defaultCount = 100;

export interface ListQuery {
  filter?: string;
  startIndex?: number;
  count?: number;
  sortBy?: string;
  sortOrder?: 'ascending' | 'descending';
  attributes?: string;
  excludedAttributes?: string;
}

export async function listUsers(caller: Caller, query: ListQuery) {
  const where =
    query.filter !== undefined && query.filter.trim() !== '' ? compileFilter(parseFilter(query.filter)) : sql`true`;
  const direction = query.sortOrder === 'descending' ? sql`desc` : sql`asc`;
  // Ids sort by creation time, which also breaks ties.
  const order = query.sortBy
    ? sql`${sortColumn(query.sortBy)} ${direction} nulls last, s.id ${direction}`
    : sql`s.id ${direction}`;
  // RFC 7644 §3.4.2.4: a startIndex below 1 is 1, a negative count is 0.
  const startIndex = Math.max(1, Math.trunc(query.startIndex ?? 1));
  const count = Math.min(maxResults, Math.max(0, Math.trunc(query.count ?? defaultCount)));
  const { rows, total } = await repoList(caller.deps.db, caller.tenant, where as never, order, {
    // Far past any list, but a number PostgreSQL takes as a bigint.
    offset: Math.min(startIndex - 1, Number.MAX_SAFE_INTEGER),
    limit: count,
  });
  const resources: ScimUser[] = rows.map((row) =>
    project(render(row, locationOf(caller, row.id)), query.attributes, query.excludedAttributes),
  );
  return {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
