/**
 * A kiosk in a real browser: Debian's headless Chromium driven by playwright-core, without JavaScript, as a shared
 * tablet would be used. A person without e-mail types their code (in lower case, with spaces) on `/k`, lands on their
 * answer page, answers; the next try of that code is refused as used. Without /usr/bin/chromium (or CHROMIUM_PATH)
 * the test is skipped and says so.
 */

import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { activeSurvey, allRecipients, insertPeople, startWithSmtp, tenant, waitForStatus } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

const available = chromiumAvailable('kiosk browser test');

describe.skipIf(!available)('a kiosk in headless Chromium', () => {
  let t: TestService;
  let smtp: TestSmtp;
  let browser: Browser;
  beforeAll(async () => {
    ({ t, smtp } = await startWithSmtp());
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it(
    'opens the answer page for a typed code, takes the answer, then refuses the code as used',
    { timeout: 60_000 },
    async () => {
      const { live, organizationId } = await tenant(t);
      await insertPeople(t, organizationId, [
        { externalId: 'F-0001', firstName: 'Rosa', lastName: 'Parks', department: 'Assembly' },
      ]);
      const surveyId = await activeSurvey(live, {
        title: 'Plant 11 pulse',
        questions: [{ type: 'nps', text: 'How likely are you to recommend working here?' }],
      });
      const d = await live.unwrap(
        live.POST('/api/v1/surveys/{surveyId}/distribute', {
          params: { path: { surveyId } },
          body: { targeting: { filters: [] }, distribution: { method: 'kiosk' } },
        }),
      );
      await waitForStatus(live, surveyId, d.id, ['sent']);
      const [person] = await allRecipients(live, surveyId, d.id);
      expect(person).toMatchObject({ email: null, respondentExternalId: 'F-0001' });
      const code = person!.accessCode!;

      const page = await browser.newPage({ viewport: { width: 820, height: 1180 }, javaScriptEnabled: false });
      await page.goto(`${t.url}/k`);
      expect(await page.title()).toBe('Open your survey');
      // The field is ready to type into when the page opens, and found by its label.
      expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('code');
      await page.getByLabel('Access code').pressSequentially(code.toLowerCase().replaceAll('-', ' '));
      await page.keyboard.press('Enter');
      await page.waitForURL(person!.link);
      expect(await page.title()).toBe('Plant 11 pulse');

      await page.getByRole('radio', { name: '9' }).check();
      await page.getByRole('button', { name: 'Submit my answers' }).click();
      await page.waitForSelector('h1:has-text("Thank you")');
      const [response] = await live.unwrap(
        live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
      );
      expect(response).toMatchObject({ respondentExternalId: 'F-0001', distributionId: d.id });

      // The next person at the kiosk tries the same code.
      await page.goto(`${t.url}/k`);
      await page.getByLabel('Access code').fill(code);
      await page.getByRole('button', { name: 'Open my survey' }).click();
      await page.waitForSelector('h1');
      expect(await page.locator('h1').textContent()).toBe('This code has been used');
      expect(page.url()).toBe(`${t.url}/k`);
      // The way back to the form.
      await page.getByRole('link', { name: 'Enter a code' }).click();
      expect(await page.title()).toBe('Open your survey');
      await page.close();
    },
  );
});
