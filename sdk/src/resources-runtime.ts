/**
 * What the generated resource methods (`generated/resources.ts`) stand on: the types that turn a path and a
 * method of the document into a method's parameters and result, and the one function that makes every call
 * through the low-level openapi-fetch client (so retries, the `Idempotency-Key` and timeouts apply alike).
 */
import type { Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { TimeoutError } from './errors.js';
import { paginate } from './pagination.js';
import { lastFailureBefore } from './retry.js';
import { unwrap, type EnvelopeData } from './unwrap.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>;

/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The JSON request body of an operation. */
export type BodyOf<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

type SuccessStatus = 200 | 201 | 202;
/**
 * A success body in JSON: `application/json`, or `application/scim+json` (the SCIM operations answer only that
 * media type, which is JSON too, and openapi-fetch parses it like any JSON body).
 */
type JsonContent<Response> = Response extends { content: { 'application/json': infer J } }
  ? J
  : Response extends { content: { 'application/scim+json': infer J } }
    ? J
    : never;
type SuccessJson<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends SuccessStatus ? JsonContent<R[S]> : never }[keyof R]
  : never;

/** What a resource method resolves to: the success envelope's `data` (the body itself when not enveloped). */
export type ResultOf<P extends keyof paths, M extends HttpMethod> = EnvelopeData<SuccessJson<Operation<P, M>>>;
/** One item of a list operation. */
export type ItemOf<P extends keyof paths> =
  SuccessJson<Operation<P, 'get'>> extends { data: readonly (infer Item)[] } ? Item : never;

/** Options of one call, after its parameters. */
export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Gives up on the whole call, retries included, after this many ms (each attempt also has the client's timeout). */
  timeoutMs?: number;
  /** For a POST: the key the server deduplicates on. The SDK makes one up when absent, and keeps it across retries. */
  idempotencyKey?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

interface CallInit {
  path?: Record<string, string>;
  query?: object;
  body?: unknown;
}

function requestInit(init: CallInit, options: CallOptions = {}) {
  const signals = [options.signal, options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  return {
    params: { path: init.path, query: init.query },
    ...(init.body !== undefined ? { body: init.body } : {}),
    signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
    headers: { ...options.headers, ...(options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {}) },
  };
}

export interface Caller {
  /** Calls the operation and resolves to its `data`, or throws the typed `SurveyServiceError`. */
  call(method: HttpMethod, path: string, init: CallInit, options?: CallOptions): Promise<never>;
  /** Calls the operation and resolves to the raw `Response` (files: an export's download). */
  raw(method: HttpMethod, path: string, init: CallInit, options?: CallOptions): Promise<Response>;
  /** Every item of a list operation, page after page. */
  all(path: string, init: CallInit, options?: CallOptions): AsyncGenerator<never, void, undefined>;
}

/**
 * A call given up by its own `timeoutMs` throws the SDK's `TimeoutError`, like the wait helpers, with the error of its
 * last failed attempt as `cause` (what it was retrying when the time ran out), else the timeout itself.
 */
async function timed<T>(work: Promise<T>, path: string, options: CallOptions = {}): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (
      options.timeoutMs &&
      (error as { name?: string } | undefined)?.name === 'TimeoutError' &&
      !(error instanceof TimeoutError)
    ) {
      throw new TimeoutError(`${path} did not answer within ${options.timeoutMs} ms`, {
        cause: lastFailureBefore(error) ?? error,
      });
    }
    throw error;
  }
}

export function createCaller(client: Client<paths>): Caller {
  // The generated methods are typed by path; the one dispatch below is not (openapi-fetch's overloads are per path).
  const byMethod = client as unknown as Record<string, (path: string, init: unknown) => Promise<never>>;
  return {
    call: (method, path, init, options) =>
      timed(unwrap(byMethod[method.toUpperCase()]!(path, requestInit(init, options))), path, options) as Promise<never>,
    async raw(method, path, init, options) {
      const result = (await byMethod[method.toUpperCase()]!(path, {
        ...requestInit(init, options),
        parseAs: 'stream',
      })) as { response: Response; error?: unknown };
      if (!result.response.ok)
        await unwrap(Promise.resolve({ error: result.error ?? null, response: result.response }));
      return result.response;
    },
    all: (path, init, options) =>
      paginate(client as never, path as never, requestInit(init, options) as never) as AsyncGenerator<
        never,
        void,
        undefined
      >,
  };
}
