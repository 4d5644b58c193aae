/**
 * The Express application: request id and access log, authentication (key, plan, budget, scope), JSON body
 * parsing with per-route limits, express-openapi-validator on the bundled contract (requests always; responses
 * when configured — development and tests), handlers bound by operationId, and one error mapping.
 */
import express, { type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { accessLog } from './access-log.js';
import { authenticate } from './authenticate.js';
import { loadContract, operationsOf } from './contract.js';
import { serveDocs } from './docs.js';
import { errorHandler } from './error-handler.js';
import type { HandlerMap, Services } from './handler.js';
import { assertEveryOperationHandled, resolverFor } from './bind.js';
import { answerPages } from '../modules/distributions/answer-page.js';
import { requestId } from './request-id.js';

/** Body limits: small everywhere, large only where the contract says so. */
export const bodyLimits = { default: '64kb', '/api/v1/respondents/sync': '64mb' } as const;

export function createApp(services: Services, handlers: HandlerMap): Express {
  const contract = loadContract();
  assertEveryOperationHandled(contract, handlers);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');

  app.use(requestId);
  app.use(accessLog(services.log));
  app.get('/docs', serveDocs(services.log));
  // The respondents' answer and unsubscribe pages (HTML, no API key), outside /api/v1.
  app.use(answerPages(services));
  app.use(authenticate({ db: services.db, counters: services.counters, rateLimits: services.rateLimits, operations: operationsOf(contract), log: services.log, inFlight: services.inFlight }));
  app.use('/api/v1/respondents/sync', express.json({ limit: bodyLimits['/api/v1/respondents/sync'] }));
  app.use(express.json({ limit: bodyLimits.default }));
  app.use(
    OpenApiValidator.middleware({
      apiSpec: structuredClone(contract) as never,
      // allErrors: the envelope lists every problem, not only the first.
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: true, allErrors: true },
      validateResponses: services.config.validateResponses ? { removeAdditional: false } : false,
      validateSecurity: false,
      validateFormats: true,
      ignoreUndocumented: false,
      operationHandlers: { basePath: '/', resolver: resolverFor(handlers, services) as never },
    }),
  );
  app.use(errorHandler(services.log));
  return app;
}
