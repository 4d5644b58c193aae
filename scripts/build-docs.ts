/**
 * `npm run docs`: the standalone Redoc page of the API, `docs/dist/index.html`, built from the bundled
 * document by `redocly build-docs --inlineBundle` (Redocly CLI 2's name for it: the Redoc scripts are
 * embedded instead of loaded from Redocly's CDN), so the page works offline and behind strict CSPs.
 *
 * After building, the page is checked: no `<script src>`, no external stylesheet, preload or CSS `@import`.
 * A page that would fetch code or styles from the network fails the build.
 *
 * Beside it, the reference for readers without JavaScript (scripts/build-reference.ts): `reference.html` (plain
 * HTML, no script; served at /docs/reference) and `llms.txt` (the same as one Markdown file; /docs/llms.txt). The
 * Redoc page links to both at its top, in markup, so the links work before and without its script.
 *
 * The server imports `ensureDocs()` at start-up to (re)build the pages when one is missing or older than the
 * bundle; `npm run generate` refreshes the bundle, not the pages.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { renderReference } from './build-reference.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface BuildDocsOptions {
  /** The bundled document (default `openapi/bundled/openapi.json`). */
  bundle?: string;
  /** Where to write the page (default `docs/dist/index.html`). */
  output?: string;
  /** The page's `<title>` (default the document's `info.title`). */
  title?: string;
}

export const defaultBundle = join(root, 'openapi', 'bundled', 'openapi.json');
export const defaultDocsOutput = join(root, 'docs', 'dist', 'index.html');

/** The pages built beside the Redoc page (`output`): the reference without JavaScript, and as Markdown. */
export function companionsOf(output: string = defaultDocsOutput): { reference: string; llms: string } {
  return { reference: join(dirname(output), 'reference.html'), llms: join(dirname(output), 'llms.txt') };
}

/**
 * Lists what the page would fetch from elsewhere: scripts with `src`, `<link>`s to absolute URLs, CSS
 * `@import`s and `url()`s to absolute URLs in `<style>`. Script bodies are skipped (the inlined Redoc bundle
 * mentions URLs as strings, such as links to Redocly's documentation). Empty means self-contained.
 */
export function findExternalResources(html: string): string[] {
  const found: string[] = [];
  const absolute = /^\s*(?:https?:)?\/\//i;
  const attr = (tag: string, name: string) =>
    new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?<\/script\s*>/gi, '$1</script>');

  for (const [tag] of markup.matchAll(/<script\b[^>]*>/gi)) {
    const src = attr(tag, 'src');
    if (src) found.push(`script src=${src[1] ?? src[2] ?? src[3]}`);
  }
  for (const [tag] of markup.matchAll(/<link\b[^>]*>/gi)) {
    const href = attr(tag, 'href');
    const value = href ? (href[1] ?? href[2] ?? href[3] ?? '') : '';
    if (absolute.test(value)) found.push(`link href=${value}`);
  }
  for (const [, css] of markup.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi)) {
    for (const [rule] of css!.matchAll(/@import\s+[^;]+;?/gi)) found.push(`css ${rule.trim()}`);
    for (const [, , url] of css!.matchAll(/url\(\s*(['"]?)((?:https?:)?\/\/[^'")\s]+)\1\s*\)/gi))
      found.push(`css url(${url})`);
  }
  return found;
}

/** Builds the page and checks it is self-contained; rejects with the offending resources otherwise. */
/**
 * Redoc's sidebar credit loads its logo from Redocly's CDN at run time (a URL inside the inlined script, which
 * the markup check cannot see): point it at an inline SVG so that opening the page sends nothing anywhere.
 */
const cdnLogos = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
const inlineLogo = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><circle cx="8" cy="8" r="7" fill="#32329f"/></svg>')}`;

export function withoutCdnLogo(html: string): string {
  return html.replace(cdnLogos, inlineLogo);
}

/**
 * Redoc 3 keeps a deep link's hash on a fresh load (a sidebar link opened in a new tab, a bookmark, a link in a
 * message) but stays at the top of the page. This script follows it the way a click would: once the page is
 * hydrated (the sidebar link carries React's props), it steps to the top and clicks the sidebar link with that hash.
 */
const followDeepLink = `<script>
(function () {
  var hash = window.location.hash;
  if (!hash || hash === '#' || hash === '#/') return;
  var clean = hash.replace(/["\\\\]/g, '');
  var segments = clean.slice(2).split('/');
  // The tag first (its operations render when it opens), then the operation, as a reader would click them.
  var steps = segments.length > 1 ? ['#/' + segments[0], clean] : ['#/', clean];
  var deadline = Date.now() + 15000;
  function linkTo(target) {
    var link = document.querySelector('a[href="' + target + '"]');
    return link && Object.keys(link).some(function (key) { return key.indexOf('__reactProps') === 0; }) ? link : null;
  }
  (function next() {
    if (steps.length === 0 || Date.now() > deadline) return;
    if (steps[0] === '#/') {
      steps.shift();
      window.location.hash = '#/';
      return setTimeout(next, 300);
    }
    var link = linkTo(steps[0]);
    if (!link) return setTimeout(next, 50);
    steps.shift();
    link.click();
    setTimeout(next, 300);
  })();
})();
</script>
`;

export function withDeepLinks(html: string): string {
  const end = html.lastIndexOf('</body>');
  if (end < 0) throw new Error('The docs page has no </body>');
  return html.slice(0, end) + followDeepLink + html.slice(end);
}

/** An empty inline icon, so that browsers do not ask the server for /favicon.ico (a 404 on every visit). */
export function withInlineIcon(html: string): string {
  const head = html.indexOf('</head>');
  if (head < 0) throw new Error('The docs page has no </head>');
  return `${html.slice(0, head)}<link rel="icon" href="data:,">\n${html.slice(head)}`;
}

/**
 * A line at the top of the Redoc page, outside the element Redoc draws into, linking to the reference without
 * JavaScript: what a text browser, `curl` or a browser with scripts off shows first. Relative links, so that they
 * hold under a path prefix (the page is served at `<base>/docs`).
 */
export function withReferenceLinks(html: string): string {
  const head = html.indexOf('</head>');
  const body = head < 0 ? -1 : html.indexOf('<body>', head);
  if (body < 0) throw new Error('The docs page has no <body>');
  const at = body + '<body>'.length;
  const bar =
    '\n<nav aria-label="Other forms of this reference" style="margin:0;padding:6px 16px;font:14px/1.5 system-ui,' +
    'sans-serif;background:#f6f6f9;color:#1a1a1a;border-bottom:1px solid #ddd">Also without JavaScript: ' +
    '<a href="docs/reference" style="color:#2b2b9a">the reference as plain HTML</a> · ' +
    '<a href="docs/llms.txt" style="color:#2b2b9a">as one Markdown file (llms.txt)</a></nav>\n';
  return html.slice(0, at) + bar + html.slice(at);
}

export async function buildDocs(options: BuildDocsOptions = {}): Promise<{ output: string; bytes: number }> {
  const bundle = resolve(options.bundle ?? defaultBundle);
  const output = resolve(options.output ?? defaultDocsOutput);
  const document = JSON.parse(readFileSync(bundle, 'utf8')) as { info?: { title?: string; version?: string } };
  const title = options.title ?? document.info?.title ?? 'API reference';
  mkdirSync(dirname(output), { recursive: true });
  // Build beside the page and rename into place, so a server never serves a half-written or unchecked page.
  const draft = `${output}.${process.pid}.tmp.html`;

  try {
    await promisify(execFile)(
      join(root, 'node_modules', '.bin', 'redocly'),
      ['build-docs', bundle, '--inlineBundle', '--title', title, '--output', draft],
      {
        cwd: root,
        // Keep the build quiet and local: no usage telemetry, no update check.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const html = withReferenceLinks(withInlineIcon(withDeepLinks(withoutCdnLogo(readFileSync(draft, 'utf8')))));
    writeFileSync(draft, html);
    const external = findExternalResources(html);
    if (external.length > 0) {
      throw new Error(`The docs page is not self-contained; it would fetch:\n  ${external.join('\n  ')}`);
    }
    // The companions first: a page that is fresh means all three are.
    const reference = renderReference(JSON.parse(readFileSync(bundle, 'utf8')));
    if (/<script\b/i.test(reference.html) || findExternalResources(reference.html).length > 0)
      throw new Error('The reference without JavaScript holds a script or an external resource');
    const companions = companionsOf(output);
    for (const [path, text] of [
      [companions.reference, reference.html],
      [companions.llms, reference.markdown],
    ] as const) {
      writeFileSync(`${path}.${process.pid}.tmp`, text);
      renameSync(`${path}.${process.pid}.tmp`, path);
    }
    renameSync(draft, output);
    return { output, bytes: Buffer.byteLength(html) };
  } finally {
    rmSync(draft, { force: true });
  }
}

/** True when the page or one beside it is missing or older than the bundle they are built from. */
export function docsAreStale(options: Pick<BuildDocsOptions, 'bundle' | 'output'> = {}): boolean {
  const output = options.output ?? defaultDocsOutput;
  const bundled = statSync(options.bundle ?? defaultBundle).mtimeMs;
  return [output, ...Object.values(companionsOf(output))].some(
    (path) => !existsSync(path) || statSync(path).mtimeMs < bundled,
  );
}

/** Builds the page only when it is stale; for the server's start-up. Resolves to whether it built. */
export async function ensureDocs(options: BuildDocsOptions = {}): Promise<boolean> {
  if (!docsAreStale(options)) return false;
  await buildDocs(options);
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildDocs().then(
    ({ output, bytes }) => {
      console.log(`docs: ${output} (${Math.round(bytes / 1024)} KiB, self-contained)`);
      for (const path of Object.values(companionsOf(output)))
        console.log(`docs: ${path} (${Math.round(statSync(path).size / 1024)} KiB, no JavaScript)`);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}
