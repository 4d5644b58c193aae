import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { paginate, type ListItem, type ListPath, type PaginateInit } from './pagination.js';
import { createRetryingFetch, defaultRetry, type RetryOptions } from './retry.js';
import { unwrap } from './unwrap.js';
import { SDK_VERSION } from './version.js';

export interface ClientConfig {
  /** `svc_live_…` or `svc_test_…`; sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Where the API lives, without `/api/v1` (for example `https://api.surveyservice.dev`). */
  baseUrl: string;
  /** A fetch implementation (default `globalThis.fetch`); it receives a `Request`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of network errors, 429, 500/502/503/504 and 409 `idempotency_in_progress`; see `RetryOptions`. */
  retry?: RetryOptions;
  /** Prepended to the SDK's own `User-Agent` (for example `acme-hr-sync/2.1`). */
  userAgent?: string;
  /** Timeout of one attempt in ms (default 30000; 0 for none). A timed-out attempt is retried like a network error. */
  timeoutMs?: number;
}

/**
 * The typed client: openapi-fetch's `GET`, `POST`, `PUT`, `PATCH`, `DELETE` (paths, parameters and bodies
 * checked against the document), plus `unwrap` and `paginate`.
 */
export type SurveyServiceClient<Paths extends Record<string, any> = paths> = Client<Paths> & {
  /** Resolves a call to the envelope's `data` or throws the typed error: `await client.unwrap(client.POST(…))`. */
  unwrap: typeof unwrap;
  /** Every item of a list operation, across pages: `for await (const s of client.paginate('/api/v1/surveys'))`. */
  paginate<Path extends ListPath<Paths>>(
    path: Path,
    init?: PaginateInit<Paths, Path>,
  ): AsyncGenerator<ListItem<Paths, Path>, void, undefined>;
};

/**
 * Creates a client. No global state: each client has its own key, base URL, retry policy and fetch.
 * The type parameter is for tests and advanced use against another document; leave it out.
 */
export function createClient<Paths extends Record<string, any> = paths>(config: ClientConfig): SurveyServiceClient<Paths> {
  if (!config.apiKey) throw new TypeError('createClient: apiKey is required');
  if (!config.baseUrl) throw new TypeError('createClient: baseUrl is required');
  const baseFetch = config.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retryingFetch = createRetryingFetch({
    fetch: baseFetch,
    retry: { ...defaultRetry, ...config.retry },
    timeoutMs: config.timeoutMs ?? 30_000,
  });
  const userAgent = `${config.userAgent ? `${config.userAgent} ` : ''}survey-service-sdk/${SDK_VERSION}`;
  const client = createFetchClient<Paths>({
    baseUrl: config.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch,
    headers: { Authorization: `Bearer ${config.apiKey}`, 'User-Agent': userAgent },
  });
  return Object.assign(client, {
    unwrap,
    paginate<Path extends ListPath<Paths>>(path: Path, init?: PaginateInit<Paths, Path>) {
      return paginate<Paths, Path>(client, path, init);
    },
  });
}
