/**
 * Reading the body, after authentication and only for operations that take one: `Content-Length` over the
 * route's limit is refused before a byte is read (413), a media type other than UTF-8 `application/json` gets
 * 415, and the JSON parser stops at the limit. Operations without a body never read one.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from './errors.js';
import { operationOf } from './route.js';

/** Body limits: small everywhere, large only where the contract says so. */
export const bodyLimits = { default: 64 * 1024, '/api/v1/respondents/sync': 64 * 1024 * 1024 } as const;

function limitOf(path: string): number {
  return path in bodyLimits ? bodyLimits[path as keyof typeof bodyLimits] : bodyLimits.default;
}

const parsers = new Map<number, ReturnType<typeof express.json>>();
function parserFor(limit: number) {
  let parser = parsers.get(limit);
  if (!parser) {
    // `type: () => true`: the media type was checked above; strict: only objects and arrays.
    parser = express.json({ limit, strict: true, type: () => true });
    parsers.set(limit, parser);
  }
  return parser;
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function readBody(req: Request, res: Response, next: NextFunction): void {
  const operation = operationOf(res);
  if (!operation.takesBody || !hasBody(req)) return next();
  const limit = limitOf(operation.path);
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > limit) {
    throw new ApiError(413, 'payload_too_large', `The request body exceeds the ${limit} bytes allowed for this route.`, undefined, { Connection: 'close' });
  }
  const type = req.headers['content-type'] ?? '';
  const [mediaType, ...parameters] = type.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') throw new ApiError(415, 'unsupported_media_type', 'Send the body as application/json (UTF-8).');
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=').map((part) => part.trim());
    if (name === 'charset' && value?.replace(/"/g, '') !== 'utf-8') {
      throw new ApiError(415, 'unsupported_media_type', 'Send the body as UTF-8 application/json: the only charset accepted is utf-8.');
    }
  }
  parserFor(limit)(req, res, next);
}
