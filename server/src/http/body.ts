/**
 * Reading the body, after authentication and only for operations that take one. The route's limit holds for
 * every way a body can arrive: a `Content-Length` over it is refused from the headers, before a byte is read
 * (413); a body without one (chunked) is counted as it arrives and refused the moment it passes the limit, not
 * when it ends; a compressed body is held to the limit both as sent and as decoded. A media type other than UTF-8
 * `application/json` gets 415. A refused body is not read further here: the error handler replies and then
 * discards a bounded amount of it (http/drain.ts), so that a client still sending reads the reply. Operations
 * without a body never read one.
 */
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './errors.js';
import { operationOf } from './route.js';

/** Body limits: small everywhere, large only where the contract says so. */
export const bodyLimits = {
  default: 64 * 1024,
  '/api/v1/respondents/sync': 64 * 1024 * 1024,
  // The SCIM bulk endpoint's maxPayloadSize (ServiceProviderConfig says so).
  '/scim/v2/Bulk': 1024 * 1024,
} as const;

function limitOf(path: string): number {
  return path in bodyLimits ? bodyLimits[path as keyof typeof bodyLimits] : bodyLimits.default;
}

const tooLarge = (limit: number) =>
  new ApiError(413, 'payload_too_large', `The request body exceeds the ${limit} bytes allowed for this route.`);

/** The content codings a body may be sent in (those the JSON body parser used here before accepted). */
const decoders: Record<string, () => Transform> = {
  gzip: createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function readBody(req: Request, res: Response, next: NextFunction): void {
  const operation = operationOf(res);
  if (!operation.takesBody || !hasBody(req)) return next();
  const limit = limitOf(operation.path);
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > limit) throw tooLarge(limit);
  const type = req.headers['content-type'] ?? '';
  const [mediaType, ...parameters] = type.split(';').map((part) => part.trim().toLowerCase());
  // SCIM clients send their own media type (RFC 7644 §3.1); it is JSON all the same.
  const scim = operation.path.startsWith('/scim/') && mediaType === 'application/scim+json';
  if (mediaType !== 'application/json' && !scim)
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as application/json (UTF-8).');
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=').map((part) => part.trim());
    if (name === 'charset' && value?.replace(/"/g, '') !== 'utf-8') {
      throw new ApiError(
        415,
        'unsupported_media_type',
        'Send the body as UTF-8 application/json: the only charset accepted is utf-8.',
      );
    }
  }
  readLimitedText(req, limit, (error, text) => {
    if (error) return next(error);
    try {
      req.body = parseJson(text!);
    } catch {
      return next(new ApiError(400, 'invalid_json', 'The request body is not valid JSON.'));
    }
    next();
  });
}

/**
 * The body as text, held to `limit` as sent and as decoded (see `collect`): 415 for a content coding other than
 * identity, gzip, deflate or br; 413 past the limit, with the rest left unread for a bounded drain. The one reader
 * of request bodies, for the API's JSON and the answer pages' forms alike.
 */
export function readLimitedText(
  req: Request,
  limit: number,
  done: (error: ApiError | undefined, text?: string) => void,
): void {
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decoder = coding === 'identity' ? undefined : decoders[coding]?.();
  if (coding !== 'identity' && !decoder)
    return done(
      new ApiError(
        415,
        'unsupported_media_type',
        'Send the body uncompressed, or compressed with gzip, deflate or br.',
      ),
    );
  collect(req, limit, decoder, done);
}

/**
 * Reads the body into memory while counting it against `limit`: what arrives on the wire, and what it decodes
 * to. Past the limit it stops at once — nothing more is kept and the callback gets the 413 — and leaves the rest
 * of the body unread for the error handler to drain.
 */
function collect(
  req: Request,
  limit: number,
  decoder: Transform | undefined,
  done: (error: ApiError | undefined, text?: string) => void,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let decoded = 0;
  let settled = false;

  const settle = (error?: ApiError) => {
    if (settled) return;
    settled = true;
    req.off('data', onWire);
    req.off('end', onEnd);
    req.off('error', onBroken);
    req.off('close', onClose);
    if (decoder) {
      req.unpipe(decoder);
      decoder.off('data', onDecoded);
      decoder.on('error', () => {}); // a stream cut short may still complain: nothing is listening any more
      decoder.destroy();
    }
    if (error) {
      chunks.length = 0;
      done(error);
    } else {
      done(undefined, Buffer.concat(chunks).toString('utf8'));
    }
  };
  const onDecoded = (chunk: Buffer) => {
    decoded += chunk.length;
    if (decoded > limit) settle(tooLarge(limit));
    else chunks.push(chunk);
  };
  const onWire = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) settle(tooLarge(limit));
    else if (!decoder) onDecoded(chunk);
  };
  const onEnd = () => {
    if (!decoder) settle();
  };
  // The client went away before the body ended: no one will read this reply.
  const onBroken = () => settle(new ApiError(400, 'invalid_json', 'The request body ended before it was complete.'));
  const onClose = () => {
    if (!req.complete) onBroken();
  };

  req.on('data', onWire);
  req.on('end', onEnd);
  req.on('error', onBroken);
  req.on('close', onClose);
  if (decoder) {
    decoder.on('data', onDecoded);
    decoder.on('end', () => settle());
    decoder.on('error', () =>
      settle(new ApiError(400, 'invalid_json', 'The request body could not be decoded with its Content-Encoding.')),
    );
    req.pipe(decoder);
  }
}

/**
 * JSON as express.json({ strict: true }) read it before, so that no body changes meaning: a leading byte order
 * mark is dropped, an empty body (possible only chunked) is `{}`, and the text must be an object or an array.
 */
function parseJson(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.length === 0) return {};
  // eslint-disable-next-line no-control-regex -- JSON's own whitespace: space, tab, line feed, carriage return.
  const first = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/.exec(body)?.[1];
  if (first !== '{' && first !== '[') throw new SyntaxError('not an object or an array');
  return JSON.parse(body) as unknown;
}
