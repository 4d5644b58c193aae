/**
 * The HTTP server's connections over its life. Clients and proxies keep connections open between requests and
 * reuse them (Node's agent, undici, nginx and AWS load balancers for up to 60 s): a connection the server closes
 * while it is idle can meet a request already on its way, which fails with "other side closed". So:
 * - connections stay open between requests longer than the usual client and proxy idle timeouts
 *   (KEEP_ALIVE_TIMEOUT_MS, 65 s), and the headers timeout is above it, as Node requires;
 * - a draining server (SIGTERM, a rolling restart) stops accepting, replies to every further request on an open
 *   connection with `Connection: close` (the client opens its next one elsewhere: another API process, another
 *   instance), gives idle connections a moment to receive the request a busy client is about to send, and only
 *   then closes those still idle; what is running finishes within the grace period.
 */
import type { Server } from 'node:http';
import net from 'node:net';

/** How long a draining server keeps idle connections open for a request already on its way. */
const idleDrainMs = 500;

export function keepConnections(server: Server, keepAliveTimeoutMs: number): { drain(graceMs: number): Promise<void> } {
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.headersTimeout = keepAliveTimeoutMs + 1_000;
  let draining = false;
  server.prependListener('request', (_req, res) => {
    if (draining) res.setHeader('Connection', 'close');
  });
  return {
    async drain(graceMs) {
      draining = true;
      // net.Server's close stops accepting without http.Server's closing of idle connections (see above).
      const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      const open = await new Promise<number>((resolve) =>
        server.getConnections((_error, count) => resolve(count ?? 0)),
      );
      if (open > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(idleDrainMs, graceMs)));
      server.closeIdleConnections();
      // A connection that turns idle later has replied with `Connection: close` and is closed by Node.
      const forceAfter = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(forceAfter);
    },
  };
}
