/**
 * Binds each operation of the contract to its handler by operationId, and dispatches each validated request to the
 * handler of the operation it was routed to. A missing handler fails the boot (and the compile, via `HandlerMap`).
 * The adapter turns a handler's reply into the envelope, runs POSTs through the idempotency store, and replies.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthContext } from './auth-context.js';
import type { OperationId, OperationInfo } from './contract.js';
import { metaFor } from './envelope.js';
import { ApiError, validationFailed, type ErrorDetail } from './errors.js';
import type { Dependencies } from '../dependencies.js';
import type { HandlerInput, HandlerMap, Reply } from './handler.js';
import { requestHash, runIdempotent, type StoredReply } from './idempotency.js';
import { onceMoreIfShardMoved } from '../db/shard-moves.js';

interface ContractLike {
  paths: Record<string, Record<string, { operationId?: string }>>;
}

/** Fails the boot when an operation of the contract has no handler. */
export function assertEveryOperationHandled(contract: ContractLike, handlers: HandlerMap): void {
  const missing: string[] = [];
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== 'object' || !operation || !('operationId' in operation)) continue;
      if (!operation.operationId || !(operation.operationId in handlers))
        missing.push(`${method.toUpperCase()} ${path} (${operation.operationId ?? 'no operationId'})`);
    }
  }
  if (missing.length > 0) throw new Error(`No handler for: ${missing.join(', ')}`);
}

/**
 * The last step of the pipeline: the handler of the operation that `routeRequest` resolved, found by operationId in
 * a map built once (express-openapi-validator's own operation router would match the path against every route
 * again). The validator must have matched the same route; should they ever disagree, nothing runs.
 */
export function dispatchTo(handlers: HandlerMap, deps: Dependencies): RequestHandler {
  const adapted = new Map<string, RequestHandler>();
  for (const [operationId, handler] of Object.entries(handlers))
    adapted.set(
      operationId,
      adapt(handler as unknown as (input: HandlerInput<OperationId>) => Promise<Reply<OperationId>>, deps),
    );
  return (req, res, next) => {
    const handler = adapted.get(res.locals.operationId as string);
    const matched = (req as { openapi?: { openApiRoute?: string; pathParams?: Record<string, string> } }).openapi;
    if (!handler || !matched || matched.openApiRoute !== res.locals.route)
      throw new ApiError(404, 'not_found', 'No such endpoint. See /docs for the API reference.');
    // Express gives each middleware its own (empty) params: the path's are the ones the validator checked.
    req.params = matched.pathParams ?? {};
    return handler(req, res, next);
  };
}

function adapt(
  handler: (input: HandlerInput<OperationId>) => Promise<Reply<OperationId>>,
  deps: Dependencies,
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => deps.inFlight.run(() => respond(req, res, next));

  async function respond(req: Request, res: Response, next: NextFunction): Promise<void> {
    const problems = res.locals.problems as ErrorDetail[] | undefined;
    if (problems?.length) throw validationFailed(problems);
    const input = {
      params: req.params,
      query: req.query,
      body: req.body,
      headers: req.headers,
      auth: res.locals.auth as AuthContext,
      requestId: String(res.locals.requestId),
      clientAddress: req.ip?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, ''),
      deps,
    } as unknown as HandlerInput<OperationId>;

    const idempotencyKey = req.method === 'POST' ? req.get('idempotency-key') : undefined;
    if (!idempotencyKey || !input.auth) {
      const reply = await onceMoreIfShardMoved(() => handler(input));
      if ('raw' in reply) return sendRaw(res, reply);
      if ('bare' in reply) return sendBare(res, toStoredReply(reply), deps.config.validateResponses);
      return sendJson(res, toStoredReply(reply), deps.config.validateResponses);
    }

    const { reply, replayed } = await onceMoreIfShardMoved(() =>
      runIdempotent(
        deps.db,
        deps.pool,
        { leaseMs: deps.config.idempotencyLeaseMs, waitMs: deps.config.idempotencyWaitMs },
        {
          organizationId: input.auth.organizationId,
          environment: input.auth.environment,
          key: idempotencyKey,
          hash: requestHash(req.method, req.path, req.body),
        },
        async (tx) => {
          try {
            // Every write of the handler goes into the transaction that also stores the reply.
            const reply = await handler({ ...input, deps: { ...deps, db: tx } });
            if ('raw' in reply) throw new Error('a POST operation returned a raw reply');
            return toStoredReply(reply);
          } catch (error) {
            // A refusal is a reply too, and is replayed like one; unexpected errors are not kept.
            if (error instanceof ApiError && error.status < 500) return errorReply(error);
            throw error;
          }
        },
        (reply) => withoutSecrets((res.locals.operation as OperationInfo).shownOnce, reply),
      ),
    );
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    if ((reply.body as { error?: unknown }).error) {
      const stored = (
        reply.body as { error: { code: ApiError['code']; message: string; details?: ApiError['details'] } }
      ).error;
      return next(new ApiError(reply.status, stored.code, stored.message, stored.details));
    }
    if ('bare' in (reply.body as object)) return sendBare(res, reply, deps.config.validateResponses);
    sendJson(res, reply, deps.config.validateResponses);
  }
}

/**
 * Secrets exist only in the first reply and are never written to the idempotency store: a replay carries `null` in
 * their place. The contract marks them (`x-shown-once`, http/contract.ts).
 */
function withoutSecrets(shownOnce: readonly string[], reply: StoredReply): StoredReply {
  const data = (reply.body as { data?: Record<string, unknown> }).data;
  const kept = shownOnce.filter((field) => data && field in data);
  if (!data || kept.length === 0) return reply;
  return {
    ...reply,
    body: { ...(reply.body as object), data: { ...data, ...Object.fromEntries(kept.map((f) => [f, null])) } },
  };
}

/** An operation's own headers travel in the stored body (under `headers`, never an envelope member), so replays keep
 * them. */
function toStoredReply(reply: Exclude<Reply<OperationId>, { raw: unknown }>): StoredReply {
  const { status, ...members } = reply as unknown as {
    status: number;
    data: unknown;
    pagination?: unknown;
    headers?: Record<string, string>;
  };
  return { status, body: members };
}

function errorReply(error: ApiError): StoredReply {
  return {
    status: error.status,
    body: {
      error: {
        code: error.code,
        message: error.message,
        status: error.status,
        ...(error.details ? { details: error.details } : {}),
      },
    },
  };
}

/**
 * The envelope: `data` (or its JSON text, `dataJson`, spliced in as it is), the other members, then `meta`. When
 * responses are validated (tests), it goes through `res.json`, where the validator checks it (JSON text parsed first,
 * so that the validator sees every byte that is sent). Otherwise it is written as it is: Express's `send` has nothing
 * to add to a JSON body here (no ETag, no freshness, no charset to negotiate).
 */
function sendJson(res: Response, reply: StoredReply, validateResponses: boolean): void {
  const { headers, dataJson, ...members } = reply.body as { headers?: Record<string, string>; dataJson?: string };
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  res.status(reply.status);
  if (validateResponses) {
    const data = dataJson === undefined ? {} : { data: JSON.parse(dataJson) as unknown };
    return void res.json({ ...data, ...members, meta: metaFor(res) });
  }
  const envelope = JSON.stringify({ ...members, meta: metaFor(res) });
  const body = dataJson === undefined ? envelope : `{"data":${dataJson},${envelope.slice(1)}`;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** A bare reply: its body as it is, in its media type (through `res.json` when responses are validated). */
function sendBare(res: Response, reply: StoredReply, validateResponses: boolean): void {
  const { headers, bare, contentType } = reply.body as {
    headers?: Record<string, string>;
    bare: unknown;
    contentType: string;
  };
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  res.status(reply.status);
  if (bare === undefined) return void res.end();
  res.setHeader('Content-Type', `${contentType}; charset=utf-8`);
  if (validateResponses) return void res.json(bare);
  const body = JSON.stringify(bare);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

function sendRaw(res: Response, reply: Extract<Reply<OperationId>, { raw: unknown }>): void {
  res.status(reply.status).type(reply.raw.contentType);
  if (reply.raw.filename) res.attachment(reply.raw.filename);
  for (const [name, value] of Object.entries(reply.raw.headers ?? {})) res.setHeader(name, value);
  const body = reply.raw.body;
  if (!(body instanceof Readable)) {
    res.send(body);
    return;
  }
  // A file streamed from storage: a failure half-way can only cut the connection (the status is already sent),
  // which a client sees as a short body against Content-Length, and resumes with Range.
  pipeline(body, res).catch((error: unknown) => {
    res.locals.streamError = error;
    res.destroy();
  });
}
