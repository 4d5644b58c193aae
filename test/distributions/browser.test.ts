/**
 * The answer page in a real browser: Debian's headless Chromium driven by playwright-core, on a phone-sized
 * viewport, with the keyboard. Fill in the survey, see the errors next to their questions, correct them,
 * submit. `UPDATE_SCREENSHOTS=1` refreshes docs/answer-page.png (otherwise screenshots go to a temp folder).
 * Without /usr/bin/chromium (or CHROMIUM_PATH) the test is skipped and says so.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/process.js';
import type { TestService } from '../helpers/service.js';
import { activeSurvey, allRecipients, insertPeople, people, startWithSmtp, tenant, waitForStatus } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

const available = chromiumAvailable('browser test');

describe.skipIf(!available)('the answer page in headless Chromium', () => {
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
    'is filled in with the keyboard on a phone, shows errors next to their questions, and submits',
    { timeout: 60_000 },
    async () => {
      const { live, organizationId } = await tenant(t);
      await insertPeople(t, organizationId, people(1, 'W'));
      const surveyId = await activeSurvey(live, {
        title: 'Q4 engagement pulse',
        description: 'Five questions, about two minutes. Your manager sees only team averages.',
      });
      const d = await live.unwrap(
        live.POST('/api/v1/surveys/{surveyId}/distribute', {
          params: { path: { surveyId } },
          body: { targeting: { filters: [] }, distribution: { method: 'link' } },
        }),
      );
      await waitForStatus(live, surveyId, d.id, ['sent']);
      const [recipient] = await allRecipients(live, surveyId, d.id);

      const page = await browser.newPage({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
        javaScriptEnabled: false,
      });
      const shots =
        process.env.UPDATE_SCREENSHOTS === '1'
          ? path.join(repoRoot, 'docs')
          : mkdtempSync(path.join(tmpdir(), 'answer-page-'));
      await page.goto(recipient!.link);
      expect(await page.title()).toBe('Q4 engagement pulse');
      await page.screenshot({ path: path.join(shots, 'answer-page.png'), fullPage: true });

      // Every input has an accessible name; the question is the group's name.
      await expect.poll(() => page.getByRole('group', { name: /How likely are you to recommend us/ }).count()).toBe(1);
      // Keyboard only: Tab into the NPS scale, arrows move the choice.
      await page.keyboard.press('Tab');
      await page.keyboard.press('ArrowRight');
      expect(await page.locator('input[name=q_1]:checked').getAttribute('value')).toBe('1');
      // Too many benefits and no rating; the comment box itself stops at its maximum length.
      await page.getByRole('checkbox', { name: 'Learning' }).check();
      await page.getByRole('checkbox', { name: 'Flex' }).check();
      await page.getByRole('checkbox', { name: 'Health' }).check();
      await page.getByRole('textbox', { name: /Anything else/ }).fill('This comment is far too long for the limit');
      expect(await page.getByRole('textbox', { name: /Anything else/ }).inputValue()).toHaveLength(20);
      await page.getByRole('button', { name: 'Submit my answers' }).click();

      await page.waitForSelector('.summary');
      expect(await page.title()).toMatch(/^Check your answers/);
      expect(await page.locator('#q_2-error').textContent()).toBe('Please answer this question.');
      expect(await page.locator('#q_4-error').textContent()).toBe('Choose at most 2.');
      expect(await page.locator('.error').count()).toBe(2);
      // Each link of the summary names its question; the summary has the focus as the page opens.
      expect(await page.locator('.summary li').allTextContents()).toEqual([
        'Tools are good: Please answer this question.',
        'Benefits?: Choose at most 2.',
      ]);
      expect(await page.locator(':focus').getAttribute('id')).toBe('errors');
      // The error describes the question's group (with the page's instructions), and marks its options invalid.
      expect(await page.locator('#q_4-group').getAttribute('aria-describedby')).toBe('q_4-instructions q_4-error');
      expect(await page.getByRole('checkbox', { name: 'Health' }).getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('input[name=q_1]:checked').getAttribute('value')).toBe('1');
      await page.screenshot({ path: path.join(shots, 'answer-page-errors.png'), fullPage: true });

      await page.locator('label[for=q_2-4]').click();
      await page.getByRole('checkbox', { name: 'Health' }).uncheck();
      await page.getByRole('textbox', { name: /Anything else/ }).fill('More focus time');
      await page.getByRole('button', { name: 'Submit my answers' }).click();
      await page.waitForSelector('h1:has-text("Thank you")');

      const [response] = await live.unwrap(
        live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
      );
      expect(response).toMatchObject({ respondentExternalId: 'W-0000', distributionId: d.id });
      expect(response!.answers).toEqual([
        { questionId: 'q_1', value: 1 },
        { questionId: 'q_2', value: 4 },
        { questionId: 'q_4', value: ['c_1', 'c_2'] },
        { questionId: 'q_5', value: 'More focus time' },
      ]);
      await page.close();
    },
  );
});
