/**
 * The reference without JavaScript, through HTTP as `curl` and a browser with scripts off read it:
 * /docs/reference holds every operation and webhook of the contract — method and path, summary, parameters,
 * request body, every response status, samples — in markup with no script; /docs/llms.txt holds every path as
 * Markdown; /docs links to both in its markup; none needs an API key or is in the API contract; all three are
 * cached by revalidation and gzipped for readers that accept it. The Chromium part (JavaScript disabled) is skipped,
 * and says so, without /usr/bin/chromium (or CHROMIUM_PATH).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBundle, findExternalResources } from '../../scripts/build-docs.js';
import { escapeHtml } from '../../scripts/markdown-html.js';
import { startTestService, type TestService } from '../helpers/service.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the contract as JSON
const contract = JSON.parse(readFileSync(defaultBundle, 'utf8')) as Json;
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const resolve = (value: Json): Json =>
  typeof value?.$ref === 'string'
    ? resolve(
        value.$ref
          .slice(2)
          .split('/')
          .reduce((node: Json, key: string) => node?.[key], contract),
      )
    : value;

interface Operation {
  id: string;
  method: string;
  path: string;
  summary: string;
  parameters: string[];
  statuses: string[];
  body: boolean;
  samples: string[];
}
const operations: Operation[] = [contract.paths, contract.webhooks].flatMap((items: Json) =>
  Object.entries<Json>(items).flatMap(([path, item]) =>
    methods
      .filter((method) => item[method])
      .map((method) => {
        const op = item[method];
        return {
          id: op.operationId,
          method: method.toUpperCase(),
          path,
          summary: op.summary,
          parameters: [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(p).name),
          statuses: Object.keys(op.responses ?? {}),
          body: !!op.requestBody,
          samples: (op['x-codeSamples'] ?? []).map((s: Json) => s.label ?? s.lang),
        };
      }),
  ),
);

/** A GET as plain `curl` sends it: no API key, no Accept-Encoding (fetch always asks for compression). */
function curl(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (done, fail) => {
      request(url, { headers: { 'user-agent': 'curl/8', accept: '*/*', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          done({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', fail);
      })
        .on('error', fail)
        .end();
    },
  );
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
}, 180_000);
afterAll(async () => {
  await t?.close();
});

describe('/docs/reference, read as curl reads it', () => {
  let page: string;
  beforeAll(async () => {
    const response = await curl(`${t.url}/docs/reference`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-encoding']).toBeUndefined();
    page = response.body;
  }, 120_000);

  it('has no script and fetches nothing; it is a fraction of the Redoc page', async () => {
    expect(page).not.toMatch(/<script\b/i);
    expect(findExternalResources(page)).toEqual([]);
    expect(page).not.toMatch(/\ssrc\s*=/i);
    const redoc = await curl(`${t.url}/docs`);
    expect(page.length).toBeLessThan(redoc.body.length / 2);
  });

  it('holds every operation and webhook with its method, path, summary, parameters, body, statuses and samples', () => {
    expect(operations.length).toBeGreaterThanOrEqual(58);
    const starts = operations
      .map((op) => ({ op, at: page.indexOf(`<section id="${op.id}">`) }))
      .sort((a, b) => a.at - b.at);
    const missing = starts.filter(({ at }) => at < 0).map(({ op }) => op.id);
    expect(missing).toEqual([]);
    const problems: string[] = [];
    starts.forEach(({ op, at }, k) => {
      const section = page.slice(at, starts[k + 1]?.at ?? page.indexOf('<section id="schemas">'));
      const has = (what: string, text: string) => section.includes(text) || problems.push(`${op.id}: ${what}`);
      has('method and path', `<code>${escapeHtml(`${op.method} ${op.path}`)}</code>`);
      has('summary', escapeHtml(op.summary));
      for (const name of op.parameters) has(`parameter ${name}`, `<td><code>${escapeHtml(name)}</code></td>`);
      if (op.body) has('request body', `<section id="${op.id}-request">`);
      for (const status of op.statuses) has(`status ${status}`, `<tr><td><code>${status}</code></td>`);
      for (const label of op.samples) has(`sample ${label}`, `<figcaption>${escapeHtml(label)}</figcaption>`);
    });
    expect(problems).toEqual([]);
  });

  it('describes every component schema, with its fields', () => {
    for (const [name, schema] of Object.entries<Json>(contract.components.schemas)) {
      const at = page.indexOf(`<section id="schema-${name}">`);
      expect(at, name).toBeGreaterThan(0);
      const section = page.slice(at, page.indexOf('</section>', at));
      for (const field of Object.keys(schema.properties ?? {}))
        expect(section, `${name}.${field}`).toContain(`<td><code>${escapeHtml(field)}</code></td>`);
    }
  });

  it('names the running server as the first server, as /docs does', () => {
    expect(page).toContain(`<code>${t.url}</code>`);
  });
});

describe('/docs/llms.txt', () => {
  it('is Markdown in plain text with every path, method and operation id', async () => {
    const response = await curl(`${t.url}/docs/llms.txt`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    const text = response.body;
    expect(text.startsWith(`# ${contract.info.title}`)).toBe(true);
    expect(text).not.toMatch(/<(?:section|table|td|script)\b/);
    const missing = operations.filter(
      (op) => !text.includes(`\`${op.method} ${op.path}\` — ${op.summary}`) || !text.includes(`Operation \`${op.id}\``),
    );
    expect(missing.map((op) => op.id)).toEqual([]);
    for (const path of Object.keys(contract.paths)) expect(text).toContain(path);
  });
});

describe('the links, caching and boundaries of the docs routes', () => {
  it('links /docs to both forms in its markup, before Redoc and outside any script', async () => {
    const html = (await curl(`${t.url}/docs`)).body;
    const markup = html.replace(/<script\b[^>]*>[\s\S]*?<\/script\s*>/gi, '');
    const links = markup.indexOf('<a href="docs/reference"');
    expect(links).toBeGreaterThan(0);
    expect(markup).toContain('<a href="docs/llms.txt"');
    expect(links).toBeLessThan(markup.indexOf('<div id="redoc">'));
  });

  it('answers without a key, revalidates with Last-Modified (304) and gzips when asked', async () => {
    for (const path of ['/docs', '/docs/reference', '/docs/llms.txt']) {
      const first = await curl(`${t.url}${path}`);
      expect(first.status, path).toBe(200);
      expect(first.headers['cache-control'], path).toBe('no-cache');
      expect(first.headers['vary'], path).toBe('Accept-Encoding');
      const lastModified = String(first.headers['last-modified']);
      expect(Date.parse(lastModified), path).not.toBeNaN();

      const again = await curl(`${t.url}${path}`, { 'if-modified-since': lastModified });
      expect(again.status, path).toBe(304);
      expect(again.body, path).toBe('');

      // fetch asks for gzip and inflates it: the same text arrives, compressed on the wire.
      const zipped = await fetch(`${t.url}${path}`);
      expect(zipped.headers.get('content-encoding'), path).toBe('gzip');
      expect(await zipped.text(), path).toBe(first.body);
    }
  }, 60_000);

  it('keeps the docs routes out of the API contract, and other paths under /docs unknown', async () => {
    const served = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as { paths: Json };
    expect(Object.keys(served.paths).filter((path) => path.startsWith('/docs'))).toEqual([]);
    expect((await curl(`${t.url}/docs/reference/`)).status).toBe(404);
    expect((await curl(`${t.url}/docs/index.html`)).status).toBe(404);
  });
});

const withChromium = chromiumAvailable('docs reference browser test');

describe.skipIf(!withChromium)('the reference in Chromium with JavaScript disabled', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it(
    'goes from /docs by its visible link to a reference that shows every operation',
    { timeout: 120_000 },
    async () => {
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const elsewhere: string[] = [];
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (/^(https?|wss?):/.test(url) && !url.startsWith(t.url)) {
          elsewhere.push(url);
          return route.abort();
        }
        return route.continue();
      });
      await page.goto(`${t.url}/docs`);
      const link = page.getByRole('link', { name: 'the reference as plain HTML' });
      expect(await link.isVisible()).toBe(true);
      const box = await link.boundingBox();
      expect(box!.y).toBeLessThan(100); // at the top, before anything else

      await link.click();
      await page.waitForURL(`${t.url}/docs/reference`);
      expect(await page.title()).toContain(contract.info.title);
      const hidden: string[] = [];
      for (const op of operations) {
        const heading = page.locator(`section[id="${op.id}"] > h3`);
        if (!(await heading.isVisible())) hidden.push(op.id);
        else expect(await heading.innerText()).toContain(`${op.method} ${op.path}`);
      }
      expect(hidden).toEqual([]);
      // The contents link to each operation on the page.
      await page.locator(`nav a[href="#${operations[0]!.id}"]`).click();
      expect(page.url()).toBe(`${t.url}/docs/reference#${operations[0]!.id}`);
      // And back to the other forms.
      expect(
        await page.getByRole('link', { name: 'the reference as one Markdown text file' }).getAttribute('href'),
      ).toBe('llms.txt');
      expect(elsewhere).toEqual([]);
      await context.close();
    },
  );
});
