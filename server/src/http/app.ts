/**
 * The Express application, in the order a request meets it:
 * request id and access log → the URL's length (414) → the route (one rule: exact, case-sensitive; 404 / 405
 * with Allow, after the key's checks when the request presents one) → authentication (key, plan, budget, scope;
 * before any body is read) → the body (only for operations that take one: size and media type checked before
 * reading, the size counted again as it arrives) → characters and depth PostgreSQL cannot store →
 * express-openapi-validator on the bundled contract (path and query coerced, bodies never; responses validated
 * when configured) → the handler bound by operationId → one error mapping (which drains, within bounds, a body
 * it replies before reading: http/drain.ts).
 */
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type Response,
  type Router,
} from 'express';
import { accessLog } from './access-log.js';
import { authenticate } from './authenticate.js';
import { assertEveryOperationHandled, dispatchTo } from './bind.js';
import { readBody } from './body.js';
import { loadContract, routesOf, type OperationInfo } from './contract.js';
import { withDiscriminators } from './discriminators.js';
import { serveDocs, serveLlmsText, serveReference } from './docs.js';
import { errorHandler } from './error-handler.js';
import { validationFailed, type ErrorDetail } from './errors.js';
import { strictFormats } from './formats.js';
import type { Dependencies } from '../dependencies.js';
import type { HandlerMap, OperationId } from './handler.js';
import { conflictBeforeRefusal } from './idempotency.js';
import { checkQueryEncoding, checkValue, tooDeep } from './input-checks.js';
import { requestId } from './request-id.js';
import { refuseLongUrl } from './request-size.js';
import { refuseUnrouted, routeRequest } from './route.js';
import { withSemanticChecks, type SemanticChecks } from './semantic.js';
import { openApiValidator } from './validator.js';

export { bodyLimits } from './body.js';

/**
 * What the feature modules add to the application, assembled by the composition root (start.ts): this layer knows
 * no module and no operation by name.
 */
export interface AppParts {
  /** The handler of every operation, by operationId. */
  handlers: HandlerMap;
  /** Checks a request must pass beyond its schema, by operationId (http/semantic.ts). */
  semanticChecks?: SemanticChecks;
  /** Pages outside the API (HTML, no key), mounted before routing: the respondents' answer and kiosk pages. */
  pages?: Router[];
  /** Error replies in a form of their own, before the envelope's (SCIM errors under /scim/v2). */
  errorReplies?: ErrorRequestHandler[];
  /**
   * Bodies whose array `field` holds records each validated on its own by the operation's module (a sync's
   * respondents): the request does not refuse them; `setAside` replaces a record that cannot travel on as it came
   * by its problems, before the steps that walk the body.
   */
  recordArrays?: Partial<Record<OperationId, { field: string; setAside(records: unknown[]): void }>>;
}

export function createApp(deps: Dependencies, parts: AppParts): Express {
  const { handlers, semanticChecks = {}, pages = [], errorReplies = [], recordArrays = {} } = parts;
  const contract = loadContract();
  assertEveryOperationHandled(contract, handlers);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  // One spelling per path, as routeRequest decides (the validator is handed that operation: http/validator.ts).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);

  app.use(requestId);
  app.use(accessLog(deps.log));
  app.get('/docs', serveDocs(deps.log, deps.config));
  // The same reference without JavaScript: plain HTML, and one Markdown file for tools (http/docs.ts).
  app.get('/docs/reference', serveReference(deps.log, deps.config));
  app.get('/docs/llms.txt', serveLlmsText(deps.log, deps.config));
  // The modules' pages (HTML, no API key), outside /api/v1.
  for (const page of pages) app.use(page);
  app.use(refuseLongUrl);
  app.use(routeRequest(routesOf(contract)));
  app.use(
    authenticate({
      rateLimits: deps.rateLimits,
      keys: deps.keys,
      failures: deps.authFailures,
      inFlight: deps.inFlight,
    }),
  );
  app.use(refuseUnrouted);
  app.use(readBody);
  app.use(checkInput(recordArrays));
  app.use(
    openApiValidator({
      apiSpec: withDiscriminators(structuredClone(contract)) as never,
      // coerceTypes: false — bodies keep their JSON types; path and query parameters (strings on the wire)
      // are always coerced by the validator to their documented types. allErrors: every problem is listed.
      // discriminator: a oneOf tagged by a property (discriminators.ts) reports only the tagged branch's problems.
      validateRequests: {
        allowUnknownQueryParameters: false,
        coerceTypes: false,
        allErrors: true,
        discriminator: true,
      },
      validateResponses: deps.config.validateResponses ? { removeAdditional: false } : false,
      validateSecurity: false,
      validateFormats: true,
      ajvFormats: { mode: 'full' },
      formats: strictFormats,
      ignoreUndocumented: false,
      operationHandlers: false,
    }),
  );
  app.use(dispatchTo(handlers, deps));
  // A refused keyed request whose key is in use for another request is a conflict first (http/idempotency.ts).
  app.use(conflictBeforeRefusal(deps.db));
  app.use(withSemanticChecks(semanticChecks, deps));
  for (const reply of errorReplies) app.use(reply);
  app.use(errorHandler(deps.log));
  return app;
}

/**
 * Values no schema can refuse but nothing can store: NUL and lone surrogates in the body, the query and path
 * parameters, and values nested too deep. Found problems are replied together with the validator's (the
 * adapter and the error handler merge `res.locals.problems`); too-deep bodies are refused at once.
 */
function checkInput(recordArrays: NonNullable<AppParts['recordArrays']>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const problems: ErrorDetail[] = [];
    for (const [name, value] of Object.entries((res.locals.pathParams ?? {}) as Record<string, string>))
      checkValue(value, `/path/${name}`, problems);
    const queryAt = req.originalUrl.indexOf('?');
    if (queryAt !== -1) checkQueryEncoding(req.originalUrl.slice(queryAt + 1), problems);
    checkValue(req.query, '/query', problems);
    // A numeric parameter must be a finite number: `1e400`, `Infinity` and `NaN` would be coerced into numbers
    // that no query can use.
    for (const name of (res.locals.operation as OperationInfo).numericQuery) {
      const value = (req.query as Record<string, unknown>)[name];
      if (typeof value === 'string' && !Number.isFinite(Number(value)))
        problems.push({ path: `/query/${name}`, code: 'type', message: 'must be a finite number' });
    }
    const body = req.body as Record<string, unknown> | undefined;
    if (body === undefined && (res.locals.operation as OperationInfo).bodyRequired) {
      problems.push({ path: '/body', code: 'required', message: 'this operation needs a JSON body' });
    }
    // A body's records that its module validates one by one are not the request's to refuse (AppParts.recordArrays).
    const records = recordArrays[res.locals.operationId as OperationId];
    if (records && body && typeof body === 'object' && Array.isArray(body[records.field])) {
      const { [records.field]: list, ...rest } = body;
      checkValue(rest, '/body', problems);
      records.setAside(list as unknown[]);
    } else if (body !== undefined) {
      checkValue(body, '/body', problems);
    }
    if (problems.length === 0) return next();
    res.locals.problems = problems;
    if (tooDeep(problems)) throw validationFailed(problems);
    next();
  };
}
