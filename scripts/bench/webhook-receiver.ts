/**
 * The benchmark's webhook endpoint, in its own process (forked with IPC by webhooks.ts): answers 204 at once and
 * notes, per request, the event id (`webhook-id`) and the arrival time. Sends `{ port }` when listening; answers a
 * `report` message with every arrival since the last `reset`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let arrivals: Array<[string, number]> = [];
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    arrivals.push([String(req.headers['webhook-id']), Date.now()]);
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (message: { type: string }) => {
  if (message.type === 'report') process.send!({ arrivals });
  if (message.type === 'reset') arrivals = [];
  if (message.type === 'stop') server.close(() => process.exit(0));
});
