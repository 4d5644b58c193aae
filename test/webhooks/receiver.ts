/**
 * A real webhook endpoint on 127.0.0.1 (node:http). Each path answers the way a test asks — 2xx, 3xx, 410,
 * 429/503 with Retry-After, 500, slowly, or by closing the connection — and every request is recorded with its
 * raw body, headers and arrival time.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../helpers/eventually.js';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What to do with the nth request (0-based) to a path. */
export type Behaviour = (res: ServerResponse, n: number) => void | Promise<void>;

export const ok: Behaviour = (res) =>
  void res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
export const status =
  (code: number, headers: Record<string, string> = {}, body = `status ${code}`): Behaviour =>
  (res) =>
    void res.writeHead(code, headers).end(body);
export const slow =
  (ms: number): Behaviour =>
  (res) =>
    new Promise((resolve) => setTimeout(() => resolve(void (res.destroyed || res.writeHead(200).end('late'))), ms));
export const hangUp: Behaviour = (res) => void res.socket?.destroy();
/** Fails the first `failures` requests with 500, then answers 200. */
export const failFirst =
  (failures: number): Behaviour =>
  (res, n) =>
    n < failures ? status(500)(res, n) : ok(res, n);

export interface Receiver {
  url(path: string): string;
  on(path: string, behaviour: Behaviour): void;
  received(path?: string): Received[];
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const behaviours = new Map<string, Behaviour>();
  const counts = new Map<string, number>();
  const log: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      log.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      void (behaviours.get(path) ?? ok)(res, n);
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    on: (path, behaviour) => void behaviours.set(path, behaviour),
    received: (path) => (path === undefined ? [...log] : log.filter((r) => r.path === path)),
    waitFor: (path, count, timeoutMs = 15_000) =>
      eventually(
        () => {
          const got = log.filter((r) => r.path === path);
          return got.length >= count && got;
        },
        timeoutMs,
        () => `${count} requests to ${path} (got ${log.filter((r) => r.path === path).length})`,
        20,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
