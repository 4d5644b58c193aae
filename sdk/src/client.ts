import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { paginate, type ListItem, type ListPath, type PaginateInit } from './pagination.js';
import { createRetryingFetch, defaultRetry, type RetryOptions } from './retry.js';
import { createResources, type Resources } from './generated/resources.js';
import { waitForAiAnalysis, waitForDistribution, waitForPrivacyRequest } from './jobs.js';
import { waitForSyncJob, type WaitOptions } from './polling.js';
import { waitForExport, downloadExportToFile, type DownloadOptions } from './exports.js';
import { createCaller } from './resources-runtime.js';
import { verifyWebhook, type WebhookHeaders } from './webhooks.js';
import type {
  AiAnalysis,
  Distribution,
  Export,
  PrivacyRequest,
  SmartAnalytics,
  StaticAnalytics,
  SyncJob,
  SyncJobAccepted,
  SyncRequest,
  WebhookEvent,
} from './types.js';
import { analyticsQuery, type SmartAnalyticsQuery, type StaticAnalyticsQuery, type SyncBody } from './inputs.js';
import type { CallOptions } from './resources-runtime.js';
import { unwrap } from './unwrap.js';
import { SDK_VERSION } from './version.js';

export interface ClientConfig {
  /** `svc_live_…` or `svc_test_…`; sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /**
   * Where the API lives, without `/api/v1` (for example `https://api.surveyservice.dev`): the SDK's paths start with
   * it, so a base URL ending in `/api/v1` is refused by `createClient`.
   */
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

/** Waiting for jobs and verifying webhooks, beside the generated methods of the same resources. */
export interface ResourceHelpers {
  respondents: {
    /**
     * Start a respondent sync job — `POST /api/v1/respondents/sync` (startRespondentSync), each record typed as a
     * `SyncRecord` (the document leaves them untyped, as the service validates them one by one).
     */
    sync(body: SyncBody, options?: CallOptions): Promise<SyncJobAccepted>;
    /** Polls a sync job until it is `completed` or `failed` (returned, not thrown). */
    waitForSync(jobId: string, options?: WaitOptions): Promise<SyncJob>;
  };
  exports: {
    /** Polls an export until it is `completed` or `failed`. */
    wait(exportId: string, options?: WaitOptions): Promise<Export>;
    /** Streams a completed export's file to disk in constant memory, resuming a broken download; resolves to the bytes
     * written. */
    downloadToFile(exportResource: Export, filePath: string, options?: DownloadOptions): Promise<number>;
  };
  distributions: {
    /** Polls a distribution until it is no longer `scheduled` or `sending`. */
    wait(surveyId: string, distributionId: string, options?: WaitOptions): Promise<Distribution>;
  };
  privacy: {
    requests: {
      /** Polls a privacy request until it is `completed` or `failed` (returned, not thrown: read `status`, `error`). */
      wait(requestId: string, options?: WaitOptions): Promise<PrivacyRequest>;
    };
  };
  analytics: {
    /**
     * Get quantitative statistics — `GET /api/v1/surveys/{id}/analytics/static` (getStaticAnalytics); `filters` may
     * be the targeting object (sent as JSON) and `segmentBy` is checked against the fields.
     */
    static(id: string, query?: StaticAnalyticsQuery, options?: CallOptions): Promise<StaticAnalytics>;
    /** Get smart analytics — `GET /api/v1/surveys/{id}/analytics/smart` (getSmartAnalytics); `filters` as above. */
    smart(id: string, query?: SmartAnalyticsQuery, options?: CallOptions): Promise<SmartAnalytics>;
    ai: {
      /** Polls an AI analysis until it is `completed` or `failed`. */
      wait(surveyId: string, analysisId: string, options?: WaitOptions): Promise<AiAnalysis>;
    };
  };
  webhooks: {
    /**
     * Verifies a delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`, 5-minute
     * tolerance) and returns its event, typed by `type`: `switch (event.type)` narrows `event.data`. Throws
     * `WebhookVerificationError`. Pass the raw body, exactly as received.
     */
    constructEvent(payload: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent;
  };
}

/**
 * Generated methods merged with the helpers of the same resource (`client.exports.create`, `client.exports.wait`); a
 * helper of the same name replaces the generated method (typed inputs: `respondents.sync`, `analytics.static`).
 */
type Merge<A, B> = {
  [K in keyof A | keyof B]: K extends keyof B
    ? B[K] extends (...args: any[]) => any
      ? B[K]
      : K extends keyof A
        ? Merge<A[K], B[K]>
        : B[K]
    : K extends keyof A
      ? A[K]
      : never;
};
export type ClientResources = Merge<Resources, ResourceHelpers>;

/**
 * The typed client: a method per operation (`client.surveys.list()`, `client.webhooks.deliveries.redeliver(…)`,
 * resolving to the envelope's `data` or throwing a typed error), `…All()` iterators for lists, job helpers, and
 * openapi-fetch's low-level `GET`, `POST`, `PUT`, `PATCH`, `DELETE` with `unwrap` and `paginate`.
 */
export type SurveyServiceClient<Paths extends Record<string, any> = paths> = Client<Paths> &
  ClientResources & {
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
export function createClient<Paths extends Record<string, any> = paths>(
  config: ClientConfig,
): SurveyServiceClient<Paths> {
  if (!config.apiKey) throw new TypeError('createClient: apiKey is required');
  if (!config.baseUrl) throw new TypeError('createClient: baseUrl is required');
  // Every path of the SDK starts with /api/v1: a base URL ending in it would only fail later, as a 404 per call.
  if (/\/api\/v1\/*$/i.test(config.baseUrl))
    throw new TypeError(
      `createClient: baseUrl must not include /api/v1 (the SDK adds it to every path): use '${config.baseUrl.replace(/\/api\/v1\/*$/i, '')}'`,
    );
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
  const low = client as unknown as Client<paths>;
  const generated = createResources(createCaller(low));
  const helpers: ResourceHelpers = {
    respondents: {
      sync: (body, options) => generated.respondents.sync(body as unknown as SyncRequest, options),
      waitForSync: (jobId, options) => waitForSyncJob(low, jobId, options),
    },
    exports: {
      wait: (exportId, options) => waitForExport(low, exportId, options),
      downloadToFile: (exportResource, filePath, options) =>
        downloadExportToFile(low, exportResource, filePath, options),
    },
    distributions: {
      wait: (surveyId, distributionId, options) => waitForDistribution(low, surveyId, distributionId, options),
    },
    privacy: { requests: { wait: (requestId, options) => waitForPrivacyRequest(low, requestId, options) } },
    analytics: {
      static: (id, query, options) => generated.analytics.static(id, analyticsQuery(query), options),
      smart: (id, query, options) => generated.analytics.smart(id, analyticsQuery(query), options),
      ai: { wait: (surveyId, analysisId, options) => waitForAiAnalysis(low, surveyId, analysisId, options) },
    },
    webhooks: { constructEvent: (payload, headers, secret) => verifyWebhook<WebhookEvent>(payload, headers, secret) },
  };
  const resources = {
    ...generated,
    respondents: { ...generated.respondents, ...helpers.respondents },
    exports: { ...generated.exports, ...helpers.exports },
    distributions: { ...generated.distributions, ...helpers.distributions },
    privacy: { ...generated.privacy, requests: { ...generated.privacy.requests, ...helpers.privacy.requests } },
    analytics: {
      ...generated.analytics,
      static: helpers.analytics.static,
      smart: helpers.analytics.smart,
      ai: { ...generated.analytics.ai, ...helpers.analytics.ai },
    },
    webhooks: { ...generated.webhooks, ...helpers.webhooks },
  } as ClientResources;
  return Object.assign(client, resources, {
    unwrap,
    paginate<Path extends ListPath<Paths>>(path: Path, init?: PaginateInit<Paths, Path>) {
      return paginate<Paths, Path>(client, path, init);
    },
  });
}
