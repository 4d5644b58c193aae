/**
 * Replying a request whose body has not been read: refused from its headers (401, 403, 404, 413, 415, 429, …)
 * or part-way through, at the body limit. Closing the connection as soon as the reply is written resets it
 * while the client is still sending (the unread bytes make the kernel reply with RST), and a client whose send
 * fails never reads the reply. So the reply goes out whole — with its Content-Length and `Connection: close`
 * — and the response is ended (the connection closed) only once the rest of the body has been read and thrown
 * away, within `drainBounds`: the body's end, the client hanging up, `bytes` more bytes or `ms` milliseconds,
 * whichever comes first. A client still sending after that is cut off.
 */
import type { Request, Response } from 'express';

/** How much of an unread body is discarded after the reply, at most: bytes, and milliseconds. */
export const drainBounds = { bytes: 8 * 1024 * 1024, ms: 2_000 } as const;

/** Sends `envelope` as the complete JSON reply, then ends the response after draining the body (see above). */
export function replyThenDrain(req: Request, res: Response, envelope: unknown): void {
  sendThenDrain(req, res, JSON.stringify(envelope), 'application/json; charset=utf-8');
}

/** Sends `text` (status and other headers already set) as the complete reply, then drains the body (see above). */
export function sendThenDrain(req: Request, res: Response, text: string, contentType: string): void {
  res.setHeader('Connection', 'close');
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  // The reply leaves now, whole, although the response stays open: a HEAD reply is its headers.
  if (req.method === 'HEAD') res.flushHeaders();
  else res.write(text);
  if (req.complete || req.destroyed) {
    res.end();
    return;
  }
  let drained = 0;
  const finish = () => {
    clearTimeout(timer);
    req.off('data', discard);
    req.off('end', finish);
    req.off('close', finish);
    res.end();
  };
  const discard = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > drainBounds.bytes) finish();
  };
  const timer = setTimeout(finish, drainBounds.ms);
  req.on('data', discard);
  req.once('end', finish);
  req.once('close', finish);
  // The body may have been paused where reading it stopped (at the limit).
  req.resume();
}
