/** TCP ports for servers a test starts on 127.0.0.1. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** A port free now, chosen by the OS (from the ephemeral range). */
export { freePort } from '../../scripts/free-port.js';

/**
 * A free port below the kernel's ephemeral range, for a server that binds it seconds later (the embedded
 * PostgreSQL runs initdb first): a port of that range can meanwhile become some client connection's own port.
 */
export async function freePortBelowEphemeral(): Promise<number> {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: the usual default.
  }
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * Math.max(1, low - 10_000));
    if (await bindable(port)) return port;
  }
}
