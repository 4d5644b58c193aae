/** The contract itself and the health probes (public, outside the rate limits). */
import { sql } from 'kysely';
import { ApiError } from '../../http/errors.js';
import type { Handler } from '../../http/handler.js';
import { showingThisServer, thisServer } from '../../http/this-server.js';

export const getOpenApiDocument: Handler<'getOpenApiDocument'> = async ({ services, headers }) => ({
  status: 200,
  raw: {
    contentType: 'application/json',
    body: showingThisServer(services.contractJson, thisServer(services.config, headers.host)),
  },
});

export const getLiveness: Handler<'getLiveness'> = async () => ({
  status: 200,
  data: { status: 'ok', checks: {} },
});

export const getReadiness: Handler<'getReadiness'> = async ({ services }) => {
  try {
    await sql`select 1`.execute(services.db);
  } catch {
    throw new ApiError(503, 'unavailable', 'The database is unreachable.', undefined, { 'Retry-After': '5' });
  }
  return { status: 200, data: { status: 'ok', checks: { database: 'ok' } } };
};
