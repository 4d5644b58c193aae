/**
 * The baseline of the request-path benchmark, in a process of its own: a bare Express route answering
 * GET and POST with the same envelope (read from BARE_BODY_FILE) from memory. Prints `BARE: <url>`.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';

const body = JSON.parse(readFileSync(process.env.BARE_BODY_FILE!, 'utf8')) as object;
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
const answer = (_req: express.Request, res: express.Response) => {
  res.json({
    ...body,
    meta: { requestId: 'req_01JD3M8Q4W6T9ZK2F7X1B5N0C8', timestamp: new Date().toISOString(), apiVersion: 'v1' },
  });
};
app.get('/bare', answer);
app.post('/bare', express.json(), answer);
const server = app.listen(0, '127.0.0.1', () =>
  console.log(`BARE: http://127.0.0.1:${(server.address() as AddressInfo).port}`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
