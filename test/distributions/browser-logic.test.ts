/**
 * The answer page's script in a real browser (Debian's headless Chromium, playwright-core, a phone-sized
 * viewport): display logic shows a follow-up as soon as a low score is chosen and hides it again when the score
 * goes up, without a page load, and the post is stored at once; every question type is answered by mouse and
 * keyboard. `UPDATE_SCREENSHOTS=1` refreshes docs/answer-page-types.png. Without Chromium the test is skipped.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/process.js';
import type { TestService } from '../helpers/service.js';
import { activeSurvey, startWithSmtp, tenant, waitForStatus, type Client, embedUrl } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

const available = chromiumAvailable('browser logic test');

describe.skipIf(!available)('the answer page script in headless Chromium', () => {
  let t: TestService;
  let smtp: TestSmtp;
  let browser: Browser;
  let live: Client;
  beforeAll(async () => {
    ({ t, smtp } = await startWithSmtp());
    ({ live } = await tenant(t));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it(
    'shows and hides questions as answers change, and stores every type in one post',
    { timeout: 90_000 },
    async () => {
      const surveyId = await activeSurvey(live, {
        title: 'Team pulse',
        settings: { anonymous: true },
        questions: [
          { type: 'nps', text: 'How likely are you to recommend working here?' },
          {
            type: 'text',
            text: 'What would make it better?',
            displayIf: { all: [{ questionId: 'q_1', op: 'lte', value: 6 }] },
          },
          {
            type: 'matrix',
            text: 'How much do you agree?',
            rows: [{ text: 'I know what is expected of me' }, { text: 'I have the tools I need' }],
            scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
            allowNotApplicable: true,
          },
          {
            type: 'ranking',
            text: 'Rank these benefits',
            choices: [
              { id: 'pay', label: 'Pay' },
              { id: 'time', label: 'Time off' },
              { id: 'growth', label: 'Growth' },
            ],
          },
          { type: 'number', text: 'Years at the company', min: 0, max: 60, integer: true },
          { type: 'date', text: 'Your start date', required: false },
          {
            type: 'single_choice',
            text: 'Where do you work?',
            choices: [{ label: 'Office' }, { label: 'Home' }],
            allowOther: true,
          },
        ],
      });
      const d = await live.unwrap(
        live.POST('/api/v1/surveys/{surveyId}/distribute', {
          params: { path: { surveyId } },
          body: { targeting: { filters: [] }, distribution: { method: 'embed' } },
        }),
      );
      const done = await waitForStatus(live, surveyId, d.id, ['sent']);
      const page = await browser.newPage({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
      });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      let loads = 0;
      page.on('load', () => loads++);
      await page.goto(embedUrl(done));
      const followUp = page.getByRole('group', { name: /What would make it better/ });
      expect(await followUp.isVisible()).toBe(false);

      // A low score shows the follow-up at once (no page load); a high one hides it again.
      await page.locator('label[for=q_1-3]').click();
      await expect.poll(() => followUp.isVisible()).toBe(true);
      await page.getByRole('textbox', { name: /What would make it better/ }).fill('Fewer meetings');
      await page.locator('label[for=q_1-9]').click();
      await expect.poll(() => followUp.isVisible()).toBe(false);
      await page.locator('label[for=q_1-4]').click();
      await expect.poll(() => followUp.isVisible()).toBe(true);
      expect(loads).toBe(1);

      // The grid by keyboard: focus a row's first radio and move along it with the arrows.
      await page.getByRole('radio', { name: 'I know what is expected of me: 1 (Strongly disagree)' }).focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      expect(await page.locator('input[name="q_3.r_1"]:checked').getAttribute('value')).toBe('4');
      await page.getByRole('radio', { name: 'I have the tools I need: Not applicable' }).check();
      await page.getByLabel('1st').selectOption('growth');
      await page.getByLabel('2nd').selectOption('pay');
      await page.getByLabel('3rd').selectOption('time');
      await page.getByRole('spinbutton', { name: /Years at the company/ }).fill('4');
      await page.locator('input[name=q_6]').fill('2022-09-01');
      await page.locator('#q_7-other').check();
      await page.getByRole('textbox', { name: 'Other, please say' }).fill('On the road');
      const shots =
        process.env.UPDATE_SCREENSHOTS === '1'
          ? path.join(repoRoot, 'docs')
          : mkdtempSync(path.join(tmpdir(), 'answer-types-'));
      await page.screenshot({ path: path.join(shots, 'answer-page-types.png'), fullPage: true });
      await page.getByRole('button', { name: 'Submit my answers' }).click();
      await page.waitForSelector('h1:has-text("Thank you")');
      expect(errors).toEqual([]);

      const [response] = await live.unwrap(
        live.GET('/api/v1/surveys/{id}/responses', { params: { path: { id: surveyId } } }),
      );
      expect(response!.answers).toEqual([
        { questionId: 'q_1', value: 4 },
        { questionId: 'q_2', value: 'Fewer meetings' },
        { questionId: 'q_3', value: { r_1: 4, r_2: null } },
        { questionId: 'q_4', value: ['growth', 'pay', 'time'] },
        { questionId: 'q_5', value: 4 },
        { questionId: 'q_6', value: '2022-09-01' },
        { questionId: 'q_7', value: 'other', other: 'On the road' },
      ]);
      await page.close();
    },
  );
});
