/**
 * The contract's first `servers` entry is this server. The document names it by npm start's default address;
 * the served document (`GET /api/v1/openapi.json`) and the /docs page show the running server's own base URL
 * instead: `PUBLIC_BASE_URL` when set, else the address the reader reached it at (its `Host`).
 */
import type { Config } from '../config.js';

export const documentedServer = 'http://127.0.0.1:3000';

/** A Host header that can only be a host and port (it is written into JSON and HTML). */
const plainHost = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function thisServer(config: Pick<Config, 'publicBaseUrl'>, host: string | undefined): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/+$/, '');
  return host && plainHost.test(host) ? `http://${host}` : documentedServer;
}

/** The text (the document, or the docs page that embeds it) with this server's base URL in place of the documented one.
 * */
export function showingThisServer(text: string, baseUrl: string): string {
  return baseUrl === documentedServer ? text : text.split(documentedServer).join(baseUrl);
}
