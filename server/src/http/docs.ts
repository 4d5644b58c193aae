/**
 * Serves the Redoc page at /docs: the standalone HTML built by `npm run docs` (Redoc inlined, works offline).
 * When the page is missing or older than the bundled contract it is (re)built once — by scripts/build-docs.ts,
 * which owns the page's path and staleness rule — and concurrent requests wait for that one build.
 */
import type { Request, Response } from 'express';
import { defaultDocsOutput, ensureDocs } from '../../../scripts/build-docs.js';
import type { Logger } from '../logger.js';

let building: Promise<unknown> | undefined;

export async function ensureDocsBuilt(log: Logger): Promise<void> {
  building ??= ensureDocs()
    .then((built) => built && log.info('built the docs page'))
    .finally(() => (building = undefined));
  await building;
}

export function serveDocs(log: Logger) {
  return async (_req: Request, res: Response): Promise<void> => {
    await ensureDocsBuilt(log);
    res.type('html').sendFile(defaultDocsOutput);
  };
}
