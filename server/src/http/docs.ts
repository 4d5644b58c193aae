/**
 * Serves the Redoc page at /docs: the standalone HTML built by `npm run docs` (Redoc inlined, works offline).
 * When the page is missing or older than the bundled contract it is (re)built once — by scripts/build-docs.ts,
 * which owns the page's path and staleness rule — and concurrent requests wait for that one build.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Request, Response } from 'express';
import { defaultDocsOutput, ensureDocs } from '../../../scripts/build-docs.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { showingThisServer, thisServer } from './this-server.js';

let building: Promise<unknown> | undefined;

export async function ensureDocsBuilt(log: Logger): Promise<void> {
  building ??= ensureDocs()
    .then((built) => built && log.info('built the docs page'))
    .finally(() => (building = undefined));
  await building;
}

/** The page as built, read again only when the file changes. */
let page: { mtimeMs: number; html: string } | undefined;

async function builtPage(): Promise<string> {
  const { mtimeMs } = await stat(defaultDocsOutput);
  if (page?.mtimeMs !== mtimeMs) page = { mtimeMs, html: await readFile(defaultDocsOutput, 'utf8') };
  return page.html;
}

/** The page, naming this server's base URL as its first server (see http/this-server.ts). */
export function serveDocs(log: Logger, config: Pick<Config, 'publicBaseUrl'>) {
  return async (req: Request, res: Response): Promise<void> => {
    await ensureDocsBuilt(log);
    res.type('html').send(showingThisServer(await builtPage(), thisServer(config, req.headers.host)));
  };
}
