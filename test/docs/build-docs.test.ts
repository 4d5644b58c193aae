/** The Redoc page: built offline-ready from the bundle, with every tag and operation on it. */
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs, defaultBundle, docsAreStale, ensureDocs, findExternalResources } from '../../scripts/build-docs.js';

type Operation = { operationId?: string; summary?: string };
const document = JSON.parse(readFileSync(defaultBundle, 'utf8')) as {
  info: { title: string };
  tags?: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
};
const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);
const operations = Object.values(document.paths).flatMap((item) =>
  Object.entries(item)
    .filter(([method]) => methods.has(method))
    .map(([, op]) => op),
);

const work = mkdtempSync(join(tmpdir(), 'docs-'));
const output = join(work, 'index.html');
let html = '';

beforeAll(async () => {
  await buildDocs({ output });
  html = readFileSync(output, 'utf8');
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Text as it may appear in the page: as is, HTML-escaped in the markup, or JSON-escaped in Redoc's state. */
function appears(text: string): boolean {
  const htmlEscaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const jsonEscaped = JSON.stringify(text).slice(1, -1);
  return [text, htmlEscaped, jsonEscaped, jsonEscaped.replace(/</g, '\\u003c')].some((form) => html.includes(form));
}

describe('the docs page', () => {
  it('carries the API title', () => {
    expect(html).toContain(`<title>${document.info.title}</title>`);
  });

  it('shows every tag and every operation summary', () => {
    const markup = html.replace(/<script\b[^>]*>[\s\S]*?<\/script\s*>/gi, '');
    for (const tag of document.tags ?? []) expect(markup, `tag ${tag.name}`).toContain(tag.name);
    expect(operations.length).toBeGreaterThan(40);
    const missing = operations.filter((op) => !op.summary || !appears(op.summary)).map((op) => op.operationId);
    expect(missing).toEqual([]);
  });

  it('is self-contained: inline scripts only, no external stylesheet or import', () => {
    expect(findExternalResources(html)).toEqual([]);
    expect(html).not.toMatch(/<script\b[^>]*\ssrc\s*=/i);
    expect(html).toMatch(/<script\b[^>]*>[\s\S]{100000,}?<\/script>/); // the inlined Redoc bundle
    expect(html).not.toMatch(/cdn\.redoc\.ly/); // the sidebar credit's logo is inlined (withoutCdnLogo)
  });

  it('rebuilds only when the page is older than the bundle', async () => {
    expect(docsAreStale({ output })).toBe(false);
    expect(await ensureDocs({ output })).toBe(false);
    // Older than the bundle, whatever the checkout's timestamps are.
    const old = new Date(statSync(defaultBundle).mtimeMs - 3_600_000);
    utimesSync(output, old, old);
    expect(docsAreStale({ output })).toBe(true);
    expect(docsAreStale({ output: join(work, 'missing.html') })).toBe(true);
  });
});

describe('findExternalResources', () => {
  it('flags CDN scripts, stylesheets and CSS imports, and ignores URLs inside inline scripts', () => {
    const page = [
      '<script src="https://cdn.redoc.ly/redoc/latest/bundles/redoc.standalone.js"></script>',
      '<link rel="stylesheet" href="//fonts.googleapis.com/css?family=Roboto">',
      '<style>@import url("https://example.com/a.css"); body { background: url(https://example.com/b.png) }</style>',
      '<script>const docs = "<script src=\\"https://redocly.com/x.js\\">";</script>',
      '<link rel="icon" href="favicon.png">',
    ].join('\n');
    expect(findExternalResources(page)).toEqual([
      'script src=https://cdn.redoc.ly/redoc/latest/bundles/redoc.standalone.js',
      'link href=//fonts.googleapis.com/css?family=Roboto',
      'css @import url("https://example.com/a.css");',
      'css url(https://example.com/a.css)',
      'css url(https://example.com/b.png)',
    ]);
  });
});
