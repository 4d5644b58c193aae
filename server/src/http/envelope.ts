/** The envelope every response wears: `{ data, meta, pagination? }` or `{ error, meta }`. */
import type { Response } from 'express';
import type { Error as ErrorBody, Meta, Pagination } from '../generated/openapi.js';
import { ApiError } from './errors.js';

export type { Meta, Pagination };

export function metaFor(res: Response): Meta {
  return { requestId: String(res.locals.requestId), timestamp: new Date().toISOString(), apiVersion: 'v1' };
}

export function sendData(res: Response, status: number, data: unknown, pagination?: Pagination): void {
  res.status(status).json(pagination ? { data, meta: metaFor(res), pagination } : { data, meta: metaFor(res) });
}

export function sendError(res: Response, error: ApiError): void {
  res.json(errorEnvelope(res, error));
}

/** The contract's bounds of an error's texts: a message or detail echoing what was sent stays within them. */
const messageLimit = 1_000;
const pathLimit = 500;

/** `text` cut to `limit` characters with an ellipsis, never between the two halves of a surrogate pair. */
export function withinLength(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return `${text.slice(0, end)}…`;
}

/** The envelope of `error`, with its status and headers set on `res`, for a caller that sends it itself. */
export function errorEnvelope(res: Response, error: ApiError): { error: ErrorBody; meta: Meta } {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body: ErrorBody = {
    code: error.code,
    message: withinLength(error.message, messageLimit),
    status: error.status,
  };
  if (error.details && error.details.length > 0)
    body.details = error.details.map((detail) => ({
      ...detail,
      message: withinLength(detail.message, messageLimit),
      ...(detail.path === undefined ? {} : { path: withinLength(detail.path, pathLimit) }),
    }));
  res.status(error.status);
  return { error: body, meta: metaFor(res) };
}
