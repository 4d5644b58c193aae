/** A tiny scripted HTTP server on 127.0.0.1 for the SDK's behaviour tests. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void;

export async function startFakeServer(handler: Handler) {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(recorded);
      handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const meta = { requestId: 'req_test', timestamp: '2025-01-01T00:00:00Z', apiVersion: 'v1' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_test', ...headers });
  res.end(JSON.stringify(body));
}

export function sendData(res: ServerResponse, status: number, data: unknown, extra: Record<string, unknown> = {}) {
  sendJson(res, status, { data, meta, ...extra });
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
  details: unknown[] = [],
) {
  sendJson(res, status, { error: { code, message, status, details }, meta }, headers);
}
