/**
 * What a handler is. Each operation of the contract has exactly one handler, named after its operationId and
 * typed from the generated `operations`: its params, query and body come from the document, and so does the
 * `data` it may return for each success status. Handlers return data; the envelope is added in one place.
 */
import type { Readable } from 'node:stream';
import type { Dependencies } from '../dependencies.js';
import type { operations } from '../generated/openapi.js';
import type { JsonText } from '../lib/json-text.js';
import type { AuthContext } from './auth-context.js';
import type { OperationId } from './contract.js';

export type { OperationId };

type Op<Id extends OperationId> = operations[Id];
type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Field<T, K extends string> = T extends { [P in K]?: infer V } ? V : never;

export type PathParams<Id extends OperationId> = NonNullable<Field<Op<Id>['parameters'], 'path'>>;
export type QueryParams<Id extends OperationId> = NonNullable<Field<Op<Id>['parameters'], 'query'>>;
export type RequestBody<Id extends OperationId> = JsonContent<NonNullable<Field<Op<Id>, 'requestBody'>>>;

type Responses<Id extends OperationId> = Op<Id>['responses'];
export type SuccessStatus<Id extends OperationId> = Extract<keyof Responses<Id>, 200 | 201 | 202>;

/**
 * A JSON success: the status, the envelope's members other than `meta`, and response headers the operation documents.
 * `data` comes as a value, or as its JSON text already built (`dataJson`: a list page PostgreSQL serialised, which
 * is sent without being parsed and serialised again).
 */
export type JsonReply<Id extends OperationId> = {
  [S in SuccessStatus<Id>]: JsonContent<Responses<Id>[S]> extends infer Body
    ? Body extends { data: infer Data }
      ? { status: S; headers?: Record<string, string> } & ({ data: Data } | { dataJson: JsonText<Data> }) &
          Omit<Body, 'data' | 'meta'>
      : never
    : never;
}[SuccessStatus<Id>];

/** A success that is not an envelope: the contract itself, and export files (streamed, possibly a byte range). */
export interface RawReply {
  status: 200 | 206;
  raw: { contentType: string; body: string | Buffer | Readable; filename?: string; headers?: Record<string, string> };
}

/**
 * A JSON body sent as it is, without the envelope, with any status and its own media type: the SCIM server speaks
 * RFC 7644, whose successes and errors are its own bodies. Replayed by the idempotency store like any reply.
 */
export interface BareReply {
  status: number;
  bare: unknown;
  contentType: string;
  headers?: Record<string, string>;
}

export type Reply<Id extends OperationId> = JsonReply<Id> | RawReply | BareReply;

export interface HandlerInput<Id extends OperationId> {
  params: PathParams<Id>;
  query: QueryParams<Id>;
  body: RequestBody<Id>;
  /** The request's headers, names in lower case (for the few operations that read one, such as `Range`). */
  headers: Readonly<Record<string, string | undefined>>;
  /** The calling key; absent only for public operations. */
  auth: AuthContext;
  requestId: string;
  /** The client's IP address as Express sees it (`trust proxy` decides whose), IPv4 without its IPv6 mapping. */
  clientAddress: string | undefined;
  deps: Dependencies;
}

export type Handler<Id extends OperationId> = (input: HandlerInput<Id>) => Promise<Reply<Id>>;

export type HandlerMap = { [Id in OperationId]: Handler<Id> };

/** The tenant every query of a handler is scoped by: the calling key's (see db/tenant.ts). */
export { tenantOf } from '../db/tenant.js';
