/** Gives every request an id (`req_…`), echoing a well-formed `X-Request-Id` sent by the caller. */
import type { NextFunction, Request, Response } from 'express';
import { newId } from '../lib/ids.js';

const acceptable = /^req_[A-Za-z0-9_-]{8,64}$/;

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const sent = req.get('x-request-id');
  const id = sent && acceptable.test(sent) ? sent : newId('req');
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
