/** The envelope every response wears: `{ data, meta, pagination? }` or `{ error, meta }`. */
import type { Response } from 'express';
import type { components } from '../generated/openapi.js';
import { ApiError } from './errors.js';

export type Meta = components['schemas']['Meta'];
export type Pagination = components['schemas']['Pagination'];

export function metaFor(res: Response): Meta {
  return { requestId: String(res.locals.requestId), timestamp: new Date().toISOString(), apiVersion: 'v1' };
}

export function sendData(res: Response, status: number, data: unknown, pagination?: Pagination): void {
  res.status(status).json(pagination ? { data, meta: metaFor(res), pagination } : { data, meta: metaFor(res) });
}

export function sendError(res: Response, error: ApiError): void {
  res.json(errorEnvelope(res, error));
}

/** The envelope of `error`, with its status and headers set on `res`, for a caller that sends it itself. */
export function errorEnvelope(res: Response, error: ApiError): { error: components['schemas']['Error']; meta: Meta } {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body: components['schemas']['Error'] = { code: error.code, message: error.message, status: error.status };
  if (error.details && error.details.length > 0) body.details = error.details;
  res.status(error.status);
  return { error: body, meta: metaFor(res) };
}
