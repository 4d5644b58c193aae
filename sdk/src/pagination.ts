import type { Client, MaybeOptionalInit } from 'openapi-fetch';
import { unwrapEnvelope } from './unwrap.js';

/** The JSON body of an operation's 200 answer. */
type OkBody<Op> = Op extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;

/** The envelope of a paginated list: an array `data` and a `pagination` object. */
type ListEnvelope = { data: readonly unknown[]; pagination: unknown };

/** Paths whose GET answers a paginated list. */
export type ListPath<Paths> = {
  [Path in keyof Paths]: Paths[Path] extends { get: infer Op }
    ? [OkBody<Op>] extends [never]
      ? never
      : OkBody<Op> extends ListEnvelope
        ? Path
        : never
    : never;
}[keyof Paths] &
  string;

/** The type of one item of a list path. */
export type ListItem<Paths, Path extends keyof Paths> = Paths[Path] extends { get: infer Op }
  ? OkBody<Op> extends { data: readonly (infer Item)[] }
    ? Item
    : never
  : never;

/** The request options of a list path's GET (path and query parameters, headers, signal, …). */
export type PaginateInit<Paths extends Record<string, any>, Path extends keyof Paths> = MaybeOptionalInit<
  Paths[Path],
  'get'
>;

/**
 * Every item of a list operation, page after page, following `pagination.hasMore`:
 * `for await (const survey of paginate(client, '/api/v1/surveys', { params: { query: { status: 'active' } } }))`.
 * `params.query.page` sets the first page (default 1); `pageSize` is passed through (the server caps it at 100).
 * A list paged by cursor (its `pagination` has `nextCursor`: the audit log) is followed by its cursors instead,
 * from `params.query.cursor` when given. A failing page throws its typed error.
 */
export async function* paginate<Paths extends Record<string, any>, Path extends ListPath<Paths>>(
  client: Client<Paths>,
  path: Path,
  init?: PaginateInit<Paths, Path>,
): AsyncGenerator<ListItem<Paths, Path>, void, undefined> {
  const options = (init ?? {}) as { params?: { query?: Record<string, unknown> } & Record<string, unknown> };
  // No `page` on the first request unless given: the server starts at 1, and a list paged by cursor has none.
  let query: Record<string, unknown> = { ...options.params?.query };
  // Generic over any document, so the typed GET signature cannot be checked here; callers get it through Path.
  const get = client.GET as unknown as (path: string, init: unknown) => Promise<never>;
  for (;;) {
    const envelope = (await unwrapEnvelope(get(path, { ...options, params: { ...options.params, query } }))) as {
      data: ListItem<Paths, Path>[];
      pagination?: { hasMore?: boolean; nextCursor?: string | null };
    };
    yield* envelope.data;
    if (!envelope.pagination?.hasMore || envelope.data.length === 0) return;
    const { nextCursor } = envelope.pagination;
    if (nextCursor !== undefined) {
      if (nextCursor === null) return;
      const { page: _page, ...rest } = query;
      query = { ...rest, cursor: nextCursor };
    } else query = { ...query, page: (typeof query.page === 'number' ? query.page : 1) + 1 };
  }
}
