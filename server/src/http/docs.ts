/**
 * Serves the API reference, outside /api/v1 and without an API key:
 *
 * - /docs: the Redoc page built by `npm run docs` (Redoc inlined, works offline). Its operations are drawn by its
 *   script, so it links, at its top and in markup, to the two forms below.
 * - /docs/reference: the reference as plain HTML, no script (what `curl`, a text browser or scripts off get).
 * - /docs/llms.txt: the same as one Markdown text file, for tools and language models.
 *
 * When a page is missing or older than the bundled contract, all are (re)built once — by scripts/build-docs.ts,
 * which owns their paths and staleness rule — and concurrent requests wait for that one build.
 *
 * Caching: each reply carries `Last-Modified` (its build) and `Cache-Control: no-cache`, so a reader keeps its copy
 * and revalidates it (a 304, no body) instead of downloading megabytes again, and sees a new contract at once.
 * A reader that accepts gzip gets it (compressed once per build): the Redoc page is 3 MB, a tenth of it gzipped.
 */
import { readFile, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Request, Response } from 'express';
import { companionsOf, defaultDocsOutput, ensureDocs } from '../../../scripts/build-docs.js';
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

/** A built file as served to one base URL: its text, and its gzip once a reader asked for it. */
interface Served {
  mtimeMs: number;
  text: string;
  gzip?: Promise<Buffer>;
}

/**
 * By file and base URL, the most recently served few (one base URL in production: PUBLIC_BASE_URL, or the Host
 * readers use). Bounded, since the Host is the client's to choose; compressing runs off the event loop.
 */
const served = new Map<string, Served>();
const servedAtMost = 8;

async function builtFile(path: string, baseUrl: string): Promise<Served> {
  const { mtimeMs } = await stat(path);
  const key = `${path}\n${baseUrl}`;
  const known = served.get(key);
  served.delete(key);
  const entry =
    known?.mtimeMs === mtimeMs ? known : { mtimeMs, text: showingThisServer(await readFile(path, 'utf8'), baseUrl) };
  served.set(key, entry);
  for (const oldest of served.keys()) if (served.size > servedAtMost) served.delete(oldest);
  return entry;
}

/** True when the reader's copy (`If-Modified-Since`) is as new as the file, to the second HTTP dates carry. */
function notModified(req: Request, mtimeMs: number): boolean {
  const since = Date.parse(req.headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}

/** Serves one built file, naming this server's base URL as its first server (see http/this-server.ts). */
function serveBuilt(log: Logger, config: Pick<Config, 'publicBaseUrl'>, path: () => string, type: string) {
  return async (req: Request, res: Response): Promise<void> => {
    await ensureDocsBuilt(log);
    const file = await builtFile(path(), thisServer(config, req.headers.host));
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Last-Modified', new Date(file.mtimeMs).toUTCString());
    res.setHeader('Vary', 'Accept-Encoding');
    res.type(type);
    if (notModified(req, file.mtimeMs)) {
      res.status(304).end();
      return;
    }
    if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      file.gzip ??= promisify(gzip)(file.text);
      const body = await file.gzip;
      res.setHeader('Content-Encoding', 'gzip');
      res.send(body);
    } else res.send(file.text);
  };
}

/** The Redoc page. */
export function serveDocs(log: Logger, config: Pick<Config, 'publicBaseUrl'>) {
  return serveBuilt(log, config, () => defaultDocsOutput, 'text/html; charset=utf-8');
}

/** The reference as plain HTML, without JavaScript. */
export function serveReference(log: Logger, config: Pick<Config, 'publicBaseUrl'>) {
  return serveBuilt(log, config, () => companionsOf().reference, 'text/html; charset=utf-8');
}

/** The reference as one Markdown text file (served as text/plain, which every reader shows as it is). */
export function serveLlmsText(log: Logger, config: Pick<Config, 'publicBaseUrl'>) {
  return serveBuilt(log, config, () => companionsOf().llms, 'text/plain; charset=utf-8');
}
