/**
 * `npm run docs:screenshot`: builds the docs page and photographs it in headless Chromium (Debian's `chromium`,
 * or CHROMIUM_PATH) at the "Launch a survey" operation, into docs/screenshots/docs.png (committed, shown in the
 * README). The page is served from 127.0.0.1; nothing leaves the machine.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { buildDocs, defaultDocsOutput } from './build-docs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The page's DOM, as the function passed to the browser uses it (it runs there, not here). */
declare const document: { querySelector(selector: string): { getBoundingClientRect(): { top: number } } | null };

export const screenshotPath = join(root, 'docs', 'screenshots', 'docs.png');

async function main(): Promise<void> {
  await buildDocs();
  const html = readFileSync(defaultDocsOutput);
  const server = createServer(
    (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.route('**/*', (route) => (route.request().url().startsWith(origin) ? route.continue() : route.abort()));
    await page.goto(`${origin}/docs#/surveys/launchsurvey`, { waitUntil: 'networkidle' });
    await page.waitForFunction(
      () => {
        const node = document.querySelector('[data-section-id="/surveys/launchsurvey"]');
        return node !== null && Math.abs(node.getBoundingClientRect().top) < 50;
      },
      undefined,
      { timeout: 30_000 },
    );
    mkdirSync(dirname(screenshotPath), { recursive: true });
    await page.screenshot({ path: screenshotPath });
    console.log(`screenshot: ${screenshotPath}`);
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
