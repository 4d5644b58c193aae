/**
 * Serves the Redoc page at /docs: the standalone HTML built by `npm run docs` (Redoc inlined, works offline).
 * When the page is missing or older than the bundled contract it is built once, on first request.
 */
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import type { Logger } from '../logger.js';
import { contractPath } from './contract.js';

const page = fileURLToPath(new URL('../../../docs/dist/index.html', import.meta.url));

let building: Promise<void> | undefined;

async function ensureBuilt(log: Logger): Promise<void> {
  const fresh = existsSync(page) && statSync(page).mtimeMs >= statSync(contractPath).mtimeMs;
  if (fresh) return;
  building ??= (async () => {
    log.info('building the docs page');
    const { buildDocs } = (await import('../../../scripts/build-docs.js')) as { buildDocs: () => Promise<unknown> | unknown };
    await buildDocs();
  })().finally(() => (building = undefined));
  await building;
}

export function serveDocs(log: Logger) {
  return async (_req: Request, res: Response): Promise<void> => {
    await ensureBuilt(log);
    res.type('html').sendFile(page);
  };
}

export { ensureBuilt as ensureDocsBuilt };
