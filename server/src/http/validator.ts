/**
 * express-openapi-validator, run as one middleware: its own request validator (and, when configured, its own
 * response validator) on every request, built from its own spec loader, schema preprocessor and options, exactly
 * as its `middleware()` builds them. What is left out is per-request machinery that does no validation here:
 *
 * - `middleware()` returns six middlewares, each of which waits on the loaded document (`pContext.then`) on every
 *   request: five promise hops and five router layers per request. Here the document is awaited once; after
 *   that, everything runs synchronously.
 * - its metadata step matches the path against every documented route again (`lookupRoute`). The operation is
 *   the one `routeRequest` resolved (the only rule that decides it, with the path's parameters decoded); the
 *   validator is handed that operation's schema, looked up in a map built once per operation.
 * - the security step (`validateSecurity: false`: authentication is ours), the multipart step (the contract has
 *   no `multipart/form-data` body; the boot fails if one appears) and the path-parameter `app.param` hooks (the
 *   dispatcher sets `req.params` from what the validator checked) did nothing per request but cost their layer.
 */
import { createRequire } from 'node:module';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { OpenApiValidatorOpts } from 'express-openapi-validator/dist/framework/types.js';
import type { OpenApiDocument, OperationInfo } from './contract.js';
import { ApiError } from './errors.js';

const requireHere = createRequire(import.meta.url);
const requireValidator = createRequire(requireHere.resolve('express-openapi-validator'));
const dist = (file: string) => requireValidator(`./${file}`) as Record<string, unknown>;

/* eslint-disable @typescript-eslint/no-explicit-any -- the validator's internal classes are untyped here */
const { OpenApiValidator } = dist('openapi.validator.js') as { OpenApiValidator: any };
const { OpenApiSpecLoader } = dist('framework/openapi.spec.loader.js') as { OpenApiSpecLoader: any };
const { OpenApiContext } = dist('framework/openapi.context.js') as { OpenApiContext: any };
const { SchemaPreprocessor } = dist('middlewares/parsers/schema.preprocessor.js') as { SchemaPreprocessor: any };
const cloneDeep = requireValidator('lodash.clonedeep') as <T>(value: T) => T;

interface OperationMetadata {
  expressRoute: string;
  openApiRoute: string;
  schema: unknown;
  responseSchema: unknown;
}

interface Installed {
  request: RequestHandler;
  response: RequestHandler | undefined;
  operations: Map<string, OperationMetadata>;
  serial: number;
}

const operationKey = (method: string, path: string) => `${method} ${path}`;

export function openApiValidator(options: OpenApiValidatorOpts): RequestHandler {
  const document = options.apiSpec as unknown as OpenApiDocument;
  for (const [path, item] of Object.entries(document.paths))
    for (const operation of Object.values(item))
      if (JSON.stringify((operation as { requestBody?: unknown }).requestBody ?? {}).includes('multipart/'))
        throw new Error(`${path}: multipart bodies need the validator's multipart step (see http/validator.ts)`);

  // As express-openapi-validator's `middleware()` does: the options normalised by its constructor, the document
  // loaded (and checked against the OpenAPI schema) by its loader, then preprocessed for requests and responses.
  const validator = new OpenApiValidator(options);
  const normalised = validator.options as OpenApiValidatorOpts;
  const loading = new OpenApiSpecLoader({
    apiDoc: cloneDeep(normalised.apiSpec),
    validateApiSpec: normalised.validateApiSpec,
    $refParser: normalised.$refParser,
  }).load() as Promise<{
    apiDoc: OpenApiDocument;
    routes: { method: string; openApiRoute: string; expressRoute: string; basePath: string }[];
  }>;

  let installed: Installed | undefined;
  const ready = loading.then((spec) => {
    const preprocessed = new SchemaPreprocessor(
      spec.apiDoc,
      validator.ajvOpts.preprocessor,
      normalised.validateResponses,
    ).preProcess() as { apiDocRes: OpenApiDocument | null };
    const context = new OpenApiContext(
      spec,
      normalised.ignorePaths,
      normalised.ignoreUndocumented,
      normalised.useRequestUrl,
    ) as { apiDoc: OpenApiDocument; serial: number };
    const operations = new Map<string, OperationMetadata>();
    for (const route of spec.routes) {
      const path = route.openApiRoute.substring(route.basePath.length);
      const method = route.method.toLowerCase();
      operations.set(operationKey(route.method, path), {
        expressRoute: route.expressRoute,
        openApiRoute: route.openApiRoute,
        schema: context.apiDoc.paths[path]![method],
        responseSchema: preprocessed.apiDocRes?.paths[path]![method],
      });
    }
    installed = {
      request: validator.requestValidationMiddleware(context.apiDoc) as RequestHandler,
      response: normalised.validateResponses
        ? (validator.responseValidationMiddleware(preprocessed.apiDocRes, context.serial) as RequestHandler)
        : undefined,
      operations,
      serial: context.serial,
    };
    return installed;
  });
  // A document the loader refuses fails every request, as `middleware()` does (and the boot's first request shows it).
  ready.catch(() => {});

  const run = (validating: Installed, req: Request, res: Response, next: NextFunction): void => {
    const operation = res.locals.operation as OperationInfo | undefined;
    const metadata = operation && validating.operations.get(operationKey(operation.method, operation.path));
    if (!metadata) throw new ApiError(404, 'not_found', 'No such endpoint. See /docs for the API reference.');
    // A copy: the validator coerces path parameters in place, and res.locals keeps them as routed (the access log).
    const pathParams = { ...(res.locals.pathParams as Record<string, string> | undefined) };
    // What the validator's metadata step would have attached for this operation.
    (req as { openapi?: unknown }).openapi = {
      expressRoute: metadata.expressRoute,
      openApiRoute: metadata.openApiRoute,
      pathParams,
      schema: metadata.schema,
      serial: validating.serial,
      ...(validating.response ? { _responseSchema: metadata.responseSchema } : {}),
    };
    req.params = pathParams;
    const response = validating.response;
    validating.request(
      req,
      res,
      response ? (error?: unknown) => (error ? next(error) : response(req, res, next)) : next,
    );
  };
  /* eslint-enable @typescript-eslint/no-explicit-any */

  return (req, res, next) => {
    if (installed) return run(installed, req, res, next);
    ready.then((validating) => run(validating, req, res, next)).catch(next);
  };
}
