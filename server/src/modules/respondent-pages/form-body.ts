/**
 * The answer pages' form bodies (`application/x-www-form-urlencoded`), read under the same rules as the API's
 * bodies: a declared length over the limit is refused from the headers, a chunked body as soon as it passes the
 * limit, and a refusal is answered whole before a bounded drain (http/drain.ts), so a browser or script that is
 * still sending reads the page instead of a reset — by the API's own body reader (http/body.ts `readLimitedText`).
 * body-parser's reader would first read a refused body to its end, however long.
 */
import type { NextFunction, Request, Response } from 'express';
import { readLimitedText, sendThenDrain } from '../../http/index.js';
import type { FormValues } from './page-html.js';

export const formLimits = { bytes: 64 * 1024, fields: 500 } as const;

/** Middleware: `req.body` becomes the form's fields (a repeated name gives an array), or `refuse` answers. */
export function readForm(refuse: (res: Response, status: 400 | 413 | 415) => string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const declared = Number(req.get('content-length') ?? NaN);
    const refused = (status: 400 | 413 | 415) =>
      sendThenDrain(req, res, refuse(res.status(status), status), 'text/html; charset=utf-8');
    // A browser never compresses a form: anything but identity is not from the answer page.
    if (req.get('content-encoding') && req.get('content-encoding') !== 'identity') return refused(415);
    if (declared > formLimits.bytes) return refused(413);
    if (type !== 'application/x-www-form-urlencoded') {
      req.body = {};
      return next();
    }
    readLimitedText(req, formLimits.bytes, (error, text) => {
      if (error) return refused(error.status === 413 ? 413 : error.status === 415 ? 415 : 400);
      const form: FormValues = Object.create(null) as FormValues;
      let fields = 0;
      for (const [name, value] of new URLSearchParams(text)) {
        if (++fields > formLimits.fields) return refused(413);
        const seen = form[name];
        form[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
      }
      req.body = form;
      next();
    });
  };
}
