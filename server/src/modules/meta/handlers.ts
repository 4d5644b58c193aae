/** The contract itself and the health probes (public, outside the rate limits). */
import { sql } from 'kysely';
import { serviceUnavailable, showingThisServer, thisServer, type Handler } from '../../http/index.js';

export const getOpenApiDocument: Handler<'getOpenApiDocument'> = async ({ deps, headers }) => ({
  status: 200,
  raw: {
    contentType: 'application/json',
    body: showingThisServer(deps.contractJson, thisServer(deps.config, headers.host)),
  },
});

export const getLiveness: Handler<'getLiveness'> = async () => ({
  status: 200,
  data: { status: 'ok', checks: {} },
});

export const getReadiness: Handler<'getReadiness'> = async ({ deps }) => {
  try {
    await sql`select 1`.execute(deps.db);
  } catch {
    throw serviceUnavailable('The database is unreachable.');
  }
  return { status: 200, data: { status: 'ok', checks: { database: 'ok' } } };
};
