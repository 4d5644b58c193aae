/**
 * The docs page as a reader's browser opens it from the running service (headless Chromium via playwright-core):
 * every operation and every webhook is in it, it logs no console error and sends no request anywhere but the
 * service, deep links opened in a new tab land on their operation, it names the running server as the first
 * server, and no title shows a literal backtick. Without /usr/bin/chromium (or CHROMIUM_PATH) the test is
 * skipped and says so.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBundle } from '../../scripts/build-docs.js';
import { documentedServer } from '../../server/src/http/this-server.js';
import { startTestService, type TestService } from '../helpers/service.js';

const available = chromiumAvailable('docs browser test');

type Operation = { operationId?: string; summary?: string; tags?: string[] };
const contract = JSON.parse(readFileSync(defaultBundle, 'utf8')) as {
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
};
const ids = (items: Record<string, Record<string, Operation>>) =>
  Object.values(items).flatMap((item) =>
    Object.values(item)
      .map((op) => op.operationId)
      .filter((id): id is string => !!id),
  );
/** The page's DOM, as the functions passed to the browser use it (they run there, not here). */
declare const document: {
  querySelector(selector: string): { getBoundingClientRect(): { top: number } } | null;
  querySelectorAll(selector: string): { length: number };
};

/** The entries the sidebar lists under a tag: its operations and webhooks, as `#/<tag>/<operation id>` links. */
const entriesOf = (tag: string) =>
  [contract.paths, contract.webhooks].flatMap((items) =>
    Object.values(items).flatMap((item) =>
      Object.values(item)
        .filter((op) => op.operationId && op.tags?.[0] === tag)
        .map((op) => `#/${slug(tag)}/${op.operationId!.toLowerCase()}`),
    ),
  );
const slug = (tag: string) => tag.toLowerCase().replace(/\s+/g, '-');

describe.skipIf(!available)('the docs page in headless Chromium', () => {
  let t: TestService;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestService();
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A page that refuses and records requests to other hosts, and records console errors. */
  async function open(path: string): Promise<{ page: Page; elsewhere: string[]; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const elsewhere: string[] = [];
    const errors: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (/^(https?|wss?):/.test(url) && !url.startsWith(t.url)) {
        elsewhere.push(url);
        return route.abort();
      }
      return route.continue();
    });
    page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
    page.on('pageerror', (error) => void errors.push(error.message));
    await page.goto(`${t.url}${path}`, { waitUntil: 'networkidle' });
    return { page, elsewhere, errors };
  }

  it(
    'has every operation and every webhook, with no console error and no request to another host',
    { timeout: 180_000 },
    async () => {
      const { page, elsewhere, errors } = await open('/docs');
      const found = new Set<string>();
      for (const tag of contract.tags) {
        // The sidebar's tag links (`/surveys`) open the tag; its entries then link as `#/surveys/<operation id>`.
        const link = `#/${slug(tag.name)}`;
        const tagLink = `a[href="/${slug(tag.name)}"], a[href="${link}"]`;
        await page.waitForFunction((selector) => document.querySelector(selector) !== null, tagLink, {
          timeout: 30_000,
        });
        await page.evaluate(
          (selector) => (document.querySelector(selector) as unknown as { click(): void }).click(),
          tagLink,
        );
        // The sidebar fills in as it renders: wait for every entry the contract puts under this tag.
        await page
          .waitForFunction(
            (hrefs) => hrefs.every((href) => document.querySelector(`a[href="${href}"]`) !== null),
            entriesOf(tag.name),
            { timeout: 30_000 },
          )
          .catch(() => undefined); // what is missing is reported below, by name
        for (const href of await page.$$eval(`a[href^="${link}/"]`, (nodes) =>
          nodes.map((node) => node.getAttribute('href')!),
        ))
          found.add(href.split('#')[1]!.split('/')[2]!);
      }
      const expected = [...ids(contract.paths), ...ids(contract.webhooks)].map((id) => id.toLowerCase());
      expect(expected.length).toBeGreaterThanOrEqual(58);
      expect(expected.filter((id) => !found.has(id))).toEqual([]);
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    },
  );

  it.each([
    ['an operation', '#/surveys/launchsurvey', 'Launch a survey'],
    ['a webhook', '#/webhooks/receiveresponsesubmittedevent', 'response.submitted'],
  ])('opens a deep link to %s in a new tab at that entry', { timeout: 60_000 }, async (_kind, hash, title) => {
    const { page, errors } = await open(`/docs${hash}`);
    const section = hash.slice(1);
    await page.waitForFunction(
      (id) => {
        const node = document.querySelector(`[data-section-id="${id}"]`);
        return node !== null && Math.abs(node.getBoundingClientRect().top) < 50;
      },
      section,
      { timeout: 30_000 },
    );
    expect(await page.$eval(`[data-section-id="${section}"]`, (node) => node.textContent ?? '')).toContain(title);
    expect(errors).toEqual([]);
    await page.close();
  });

  it(
    'names the running server as its first server, in the page and in the served document',
    { timeout: 60_000 },
    async () => {
      const { page } = await open('/docs');
      const html = await page.content();
      expect(html).toContain(t.url);
      expect(html).not.toContain(documentedServer);
      await page.close();
      const served = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as {
        servers: { url: string; description: string }[];
      };
      expect(served.servers[0]!.url).toBe(t.url);
      // The description names npm start's default, which the rewrite to this server's address must not change.
      expect(served.servers[0]!.description).toContain('port 3000');
      expect(served.servers[0]!.description).not.toContain(t.url);
      expect(served.servers[1]!.url).toBe('https://api.surveyservice.dev');
    },
  );

  it('shows event names and operation titles without literal backticks', { timeout: 60_000 }, async () => {
    const { page } = await open('/docs#/webhooks/receivesurveylaunchedevent');
    await page.waitForFunction(
      () => document.querySelector('[data-section-id="/webhooks/receivesurveylaunchedevent"]') !== null,
      undefined,
      { timeout: 30_000 },
    );
    const titles = await page.$$eval('h1, h2, h3, nav a, [role="menuitem"]', (nodes) =>
      nodes.map((node) => node.textContent ?? ''),
    );
    expect(titles.some((title) => title.includes('survey.launched'))).toBe(true);
    expect(titles.filter((title) => title.includes('`'))).toEqual([]);
    await page.close();
  });
});
