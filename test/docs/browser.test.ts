/**
 * The docs page as a reader's browser opens it (headless Chromium via playwright-core): it renders a section for
 * every tag, logs no console error, and sends no request anywhere but the server that served it.
 * Without /usr/bin/chromium (or CHROMIUM_PATH) the test is skipped and says so.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs, defaultBundle } from '../../scripts/build-docs.js';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(executablePath);
if (!available) console.warn(`docs browser test skipped: no Chromium at ${executablePath} (install Debian's chromium package, or set CHROMIUM_PATH)`);

const document = JSON.parse(readFileSync(defaultBundle, 'utf8')) as { tags: { name: string }[] };

describe.skipIf(!available)('the docs page in headless Chromium', () => {
  const work = mkdtempSync(join(tmpdir(), 'docs-browser-'));
  let browser: Browser;
  let server: Server;
  let origin = '';

  beforeAll(async () => {
    const output = join(work, 'index.html');
    await buildDocs({ output });
    const page = readFileSync(output);
    server = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    rmSync(work, { recursive: true, force: true });
  });

  it('renders every tag, with no console error and no request to another host', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const consoleErrors: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (/^https?:/.test(url) && !url.startsWith(origin)) {
        elsewhere.push(url);
        return route.abort();
      }
      return route.continue();
    });
    page.on('console', (message) => void (message.type() === 'error' && consoleErrors.push(message.text())));
    page.on('pageerror', (error) => void consoleErrors.push(error.message));
    await page.goto(`${origin}/`, { waitUntil: 'networkidle' });
    // Redoc gives each tag a section `/<tag in lower case, spaces as dashes>`.
    const sections = await page.$$eval('[data-section-id]', (nodes) => nodes.map((node) => node.getAttribute('data-section-id')));
    const missing = document.tags.map((tag) => `/${tag.name.toLowerCase().replace(/\s+/g, '-')}`).filter((id) => !sections.includes(id));
    expect(document.tags.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
    expect(elsewhere).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  });
});
