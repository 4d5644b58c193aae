/**
 * How large a request's URL and headers may be. Node reads the request line and the headers into memory before
 * any middleware runs, and past its `maxHeaderSize` its parser gives up and Node replies a bare 431 that the
 * contract does not describe and no client can branch on. So:
 *   - the server reads up to `requestSizeLimits.headers` bytes of request line and headers (above Node's 16 KiB
 *     default, so that a long URL reaches the application and gets a reply that says what is wrong);
 *   - a URL (path and query string, as sent) longer than `requestSizeLimits.url` is refused with 414
 *     `uri_too_long` before anything else looks at the request — no key lookup, no body;
 *   - a request whose line and headers pass what the server reads is replied by `replyToClientError`: 431
 *     `headers_too_large` in the envelope, then the connection is closed.
 * The URL limit leaves room for the largest documented query parameter (`filters`, 20,000 characters, which
 * percent-encodes to at most about 60,000 bytes of ASCII).
 */
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { newId } from '../lib/ids.js';
import { drainBounds } from './drain.js';
import { ApiError } from './errors.js';

export const requestSizeLimits = { url: 64 * 1024, headers: 128 * 1024 } as const;

/** Refuses a URL over `requestSizeLimits.url` (Node hands the request target over as read: one character a byte). */
export function refuseLongUrl(req: Request, _res: Response, next: NextFunction): void {
  const length = req.originalUrl.length;
  if (length > requestSizeLimits.url) {
    throw new ApiError(
      414,
      'uri_too_long',
      `The URL is ${length} bytes long; at most ${requestSizeLimits.url} are accepted.`,
    );
  }
  next();
}

/** What Node itself replies to the other parse errors of a connection (its default `clientError` behaviour). */
const nodeDefaults: Record<string, string> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const badRequest = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/** Connections already sent a 431: they are closed once drained, whatever else their parser reports. */
const replied = new WeakSet<Duplex>();

/**
 * The server's `clientError` listener: request lines and headers past `requestSizeLimits.headers` get 431
 * `headers_too_large` in the envelope; every other parse error gets what Node replies without a listener.
 * Nothing is written into a connection whose current response has already begun.
 */
export function replyToClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Once replied, the parser reports its error again for every chunk still arriving: the reply stands.
  if (replied.has(socket)) return;
  const inFlight = (socket as Duplex & { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
  const canReply = socket.writable && !inFlight?._headerSent;
  if (error.code !== 'HPE_HEADER_OVERFLOW') {
    if (canReply) socket.write(nodeDefaults[error.code ?? ''] ?? badRequest);
    socket.destroy(error);
    return;
  }
  if (!canReply) {
    socket.destroy(error);
    return;
  }
  replied.add(socket);
  const requestId = newId('req');
  const body = JSON.stringify({
    error: {
      code: 'headers_too_large',
      message: `The request line and headers exceed the ${requestSizeLimits.headers} bytes this server reads.`,
      status: 431,
    },
    meta: { requestId, timestamp: new Date().toISOString(), apiVersion: 'v1' },
  });
  // The client may still be sending its headers: the parser, stopped at its error, discards what follows, and the
  // connection is closed once the client has read the reply and hung up, or after the drain bound at the latest.
  socket.end(
    `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), drainBounds.ms).unref();
}
