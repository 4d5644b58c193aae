/**
 * The answer page checked by axe-core (WCAG 2.0 and 2.1, levels A and AA) in Debian's headless Chromium
 * (playwright-core): a survey of every question type in English and in German, the same page after a refused
 * submission (the error summary), and the thank-you page. Then what a screen reader relies on, asserted directly:
 * each link of the error summary names its question, each question's hint, scale ends and error describe its
 * group, and the NPS and rating end labels are exposed. axe is injected by the test only (the context bypasses
 * the page's Content-Security-Policy, which allows no other script). Without Chromium the test is skipped.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AxeResults, Result } from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import type { TestService } from '../helpers/service.js';
import type { QuestionInput } from '../helpers/surveys.js';
import { allRecipients, insertPeople, people, startWithSmtp, tenant, waitForStatus } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

const available = chromiumAvailable('accessibility test');

// The page's globals as the functions run in the browser use them (the tests compile without the DOM's types).
interface PageElement {
  id: string;
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  contains(other: PageElement): boolean;
  closest(selector: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
}
declare const document: { getElementById(id: string): PageElement | null; activeElement: PageElement | null };
declare const window: { axe: { run(context: unknown, options: object): Promise<AxeResults> } };

// axe.min.js beside the package's entry point (the package exports no path to it).
const axeSource = readFileSync(
  path.join(path.dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
  'utf8',
);

/** Every question type, with the parts a screen reader must hear: hints, scale ends, N/A, "Other", display logic. */
const questions: QuestionInput[] = [
  {
    type: 'nps',
    text: 'How likely are you to recommend working here?',
    description: 'Think of the last three months.',
  },
  { type: 'rating', text: 'The tools I use are good', minLabel: 'Bad', maxLabel: 'Good', allowNotApplicable: true },
  {
    type: 'single_choice',
    text: 'Where do you work?',
    required: false,
    choices: [{ label: 'Office' }, { label: 'Home' }],
    allowOther: true,
  },
  {
    type: 'multiple_choice',
    text: 'Which benefits do you use?',
    description: 'Only those of this year.',
    choices: [{ label: 'Learning' }, { label: 'Flex' }, { label: 'Health' }, { label: 'Leave' }],
    minSelections: 1,
    maxSelections: 2,
    allowOther: true,
  },
  {
    type: 'text',
    text: 'What would make work better?',
    description: 'Please name no colleagues.',
    required: false,
    maxLength: 500,
  },
  {
    type: 'matrix',
    text: 'How much do you agree?',
    rows: [{ text: 'I know what is expected of me' }, { text: 'I have the tools I need' }],
    scale: { min: 1, max: 5, minLabel: 'Strongly disagree', maxLabel: 'Strongly agree' },
    allowNotApplicable: true,
  },
  {
    type: 'matrix',
    text: 'How do you get to work?',
    required: false,
    rows: [{ text: 'In summer' }, { text: 'In winter' }],
    columns: [{ label: 'Walk' }, { label: 'Bike' }, { label: 'Car' }],
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
  { type: 'number', text: 'Years at the company', description: 'Round down.', min: 0, max: 60, integer: true },
  { type: 'date', text: 'Your start date', required: false },
  {
    type: 'text',
    text: 'What went wrong?',
    required: false,
    displayIf: { all: [{ questionId: 'q_1', op: 'lte', value: 6 }] },
  },
];

const german: components['schemas']['SurveyTranslationInput'] = {
  title: 'Puls-Umfrage',
  description: 'Wie sich die Arbeit anfühlt',
  questions: {
    q_1: {
      text: 'Wie wahrscheinlich ist es, dass Sie uns als Arbeitgeber empfehlen?',
      description: 'Denken Sie an die letzten drei Monate.',
    },
    q_2: { text: 'Meine Arbeitsmittel sind gut', minLabel: 'Schlecht', maxLabel: 'Gut' },
    q_3: { text: 'Wo arbeiten Sie?', choices: { c_1: 'Im Büro', c_2: 'Zu Hause' } },
  },
};

describe.skipIf(!available)('the answer page, checked with axe-core in headless Chromium', () => {
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

  /** axe's WCAG 2.0 and 2.1 A and AA rules on the page as it is now. */
  async function axe(page: Page): Promise<Result[]> {
    await page.addScriptTag({ content: axeSource });
    const results = await page.evaluate(() =>
      window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }),
    );
    // A check that ran no rule would pass any page.
    expect(results.passes.length).toBeGreaterThan(5);
    return results.violations;
  }

  /** The violations, one line per element, for the assertion's message. */
  const described = (where: string, violations: Result[]) =>
    `${where}: ${violations.length} axe violation(s)\n${violations
      .map(
        (v) =>
          `- ${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.replace(/\n/g, ' ')}`).join('\n')}`,
      )
      .join('\n')}`;

  async function expectNoViolations(page: Page, where: string) {
    const violations = await axe(page);
    expect(violations, described(where, violations)).toEqual([]);
  }

  /** Each shown question's group: its name, what its aria-describedby points at, and whether each id exists. */
  const groups = (page: Page) =>
    page.locator('fieldset:not([hidden])').evaluateAll((fieldsets: PageElement[]) =>
      fieldsets.map((fieldset) => {
        const ids = (fieldset.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
        return {
          id: fieldset.id,
          described: ids.map((id: string) => {
            const target = document.getElementById(id);
            return {
              id,
              text: target?.textContent ?? null,
              inGroup: target !== null && fieldset.contains(target),
              hidden: target !== null && target.closest('[aria-hidden="true"]') !== null,
            };
          }),
        };
      }),
    );

  /** Each group's name and description as Chromium gives them to a screen reader, by the group's legend. */
  async function groupDescriptions(context: BrowserContext, page: Page): Promise<Map<string, string>> {
    const cdp = await context.newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
      nodes: { role?: { value?: string }; name?: { value?: string }; description?: { value?: string } }[];
    };
    await cdp.detach();
    return new Map(
      nodes
        .filter((node) => node.role?.value === 'group' && node.name?.value)
        .map((node) => [node.name!.value!, node.description?.value ?? '']),
    );
  }

  it(
    'has no WCAG A or AA violations, in two languages, with errors and after the answer',
    { timeout: 120_000 },
    async () => {
      const { live, organizationId } = await tenant(t);
      await insertPeople(t, organizationId, people(1, 'A'));
      const survey = await live.surveys.create({
        title: 'Team pulse',
        description: 'Eleven questions, about four minutes.',
        languages: ['en', 'de'],
        questions,
      });
      await live.surveys.translations.upsert(survey.id, 'de', german);
      await live.surveys.launch(survey.id);
      const d = await live.distributions.create(survey.id, {
        targeting: { filters: [] },
        distribution: { method: 'link' },
      });
      await waitForStatus(live, survey.id, d.id, ['sent']);
      const [recipient] = await allRecipients(live, survey.id, d.id);

      // The context lets the test add axe's script; the page's own CSP allows only the page's script.
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 1,
        isMobile: true,
        hasTouch: true,
        bypassCSP: true,
      });
      const page = await context.newPage();

      // The page as it opens, on a phone and on a wide screen (the matrix is laid out differently on each).
      await page.goto(recipient!.link);
      expect(await page.title()).toBe('Team pulse');
      await expectNoViolations(page, 'answer page (phone)');
      await page.setViewportSize({ width: 1024, height: 768 });
      await page.reload();
      await expectNoViolations(page, 'answer page (wide)');
      await page.setViewportSize({ width: 390, height: 844 });

      // Each question's hint, and the scale ends, describe its group: ids that exist, inside the group, exposed.
      const before = await groups(page);
      expect(before.map((g) => g.id)).toEqual(
        ['q_1', 'q_2', 'q_3', 'q_4', 'q_5', 'q_6', 'q_7', 'q_8', 'q_9', 'q_10'].map((id) => `${id}-group`),
      );
      for (const group of before)
        for (const target of group.described) {
          expect(target.text, `${group.id}: #${target.id}`).not.toBeNull();
          expect(target.inGroup, `${group.id}: #${target.id} is in its group`).toBe(true);
          expect(target.hidden, `${group.id}: #${target.id} is exposed`).toBe(false);
        }
      const describedBy = (id: string) =>
        before
          .find((g) => g.id === `${id}-group`)!
          .described.map((target) => target.text)
          .join(' | ');
      expect(describedBy('q_1')).toContain('Think of the last three months.');
      expect(describedBy('q_4')).toContain('Only those of this year.');
      expect(describedBy('q_5')).toContain('Please name no colleagues.');
      expect(describedBy('q_9')).toContain('Round down.');
      // The NPS and rating end labels are not hidden from assistive technology, and describe their scale.
      expect(describedBy('q_1')).toContain('Not at all likely');
      expect(describedBy('q_1')).toContain('Extremely likely');
      expect(describedBy('q_2')).toContain('Bad');
      expect(describedBy('q_2')).toContain('Good');
      expect(await page.locator('.ends').count()).toBe(2);
      expect(await page.locator('.ends[aria-hidden], [aria-hidden] .ends').count()).toBe(0);
      // What a screen reader announces on entering a group: its question, then its hint and the scale's ends.
      const spoken = await groupDescriptions(context, page);
      expect(spoken.get('1. How likely are you to recommend working here? (required)')).toBe(
        'Think of the last three months. 0 = Not at all likely 10 = Extremely likely',
      );
      expect(spoken.get('2. The tools I use are good (required)')).toBe('1 = Bad 5 = Good');
      expect(spoken.get('4. Which benefits do you use? (required)')).toBe('Only those of this year. Choose 1 to 2.');

      // A refused submission: the error summary, every message tied to its question.
      await page.getByRole('checkbox', { name: 'Learning' }).check();
      await page.getByRole('checkbox', { name: 'Flex' }).check();
      await page.getByRole('checkbox', { name: 'Health' }).check();
      await page.getByRole('button', { name: 'Submit my answers' }).click();
      await page.waitForSelector('.summary');
      await expectNoViolations(page, 'answer page with errors');
      // Without a script, the summary has the focus as the page opens.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('errors');
      // Each link names its question, so that a list of links read out of context still says where to go.
      expect(await page.locator('.summary a').allTextContents()).toEqual([
        'How likely are you to recommend working here?: Please answer this question.',
        'The tools I use are good: Please answer this question.',
        'Which benefits do you use?: Choose at most 2.',
        'How much do you agree?: Please answer this question.',
        'Rank these benefits: Please answer this question.',
        'Years at the company: Please answer this question.',
      ]);
      expect((await groupDescriptions(context, page)).get('4. Which benefits do you use? (required)')).toBe(
        'Only those of this year. Choose 1 to 2. Choose at most 2.',
      );
      const after = await groups(page);
      for (const group of after)
        for (const target of group.described) {
          expect(target.text, `${group.id}: #${target.id}`).not.toBeNull();
          expect(target.hidden, `${group.id}: #${target.id} is exposed`).toBe(false);
        }
      const errorOf = (id: string) => after.find((g) => g.id === `${id}-group`)!.described.at(-1);
      expect(errorOf('q_1')).toMatchObject({ id: 'q_1-error', text: 'Please answer this question.' });
      expect(errorOf('q_4')).toMatchObject({ id: 'q_4-error', text: 'Choose at most 2.' });
      expect(after.find((g) => g.id === 'q_4-group')!.described.map((target) => target.text)).toEqual([
        'Only those of this year.',
        'Choose 1 to 2.',
        'Choose at most 2.',
      ]);
      expect(errorOf('q_3')?.id).not.toBe('q_3-error');
      // Each summary link leads to its question's group, which takes the focus.
      const targets = await page
        .locator('.summary a')
        .evaluateAll((links: PageElement[]) => links.map((a) => a.getAttribute('href')));
      expect(targets).toEqual(['q_1', 'q_2', 'q_4', 'q_6', 'q_8', 'q_9'].map((id) => `#${id}-group`));
      await page.locator('.summary a').nth(2).press('Enter');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('q_4-group');

      // The page in German, with its errors in German.
      await page.goto(`${recipient!.link}?lang=de`);
      expect(await page.locator('html').getAttribute('lang')).toBe('de');
      await expectNoViolations(page, 'answer page in German');
      await page.getByRole('button', { name: 'Antworten absenden' }).click();
      await page.waitForSelector('.summary');
      await expectNoViolations(page, 'answer page in German with errors');
      expect(await page.locator('.summary a').first().textContent()).toBe(
        'Wie wahrscheinlich ist es, dass Sie uns als Arbeitgeber empfehlen?: Bitte beantworten Sie diese Frage.',
      );

      // Answered: the thank-you page.
      await page.goto(recipient!.link);
      await page.locator('label[for=q_1-9]').click();
      await page.locator('label[for=q_2-4]').click();
      await page.getByRole('checkbox', { name: 'Learning' }).check();
      await page.getByRole('radio', { name: 'I know what is expected of me: 4' }).check();
      await page.getByRole('radio', { name: 'I have the tools I need: Not applicable' }).check();
      await page.getByLabel('1st').selectOption('growth');
      await page.getByLabel('2nd').selectOption('pay');
      await page.getByLabel('3rd').selectOption('time');
      await page.getByRole('spinbutton', { name: /Years at the company/ }).fill('4');
      await page.getByRole('button', { name: 'Submit my answers' }).click();
      await page.waitForSelector('h1:has-text("Thank you")');
      await expectNoViolations(page, 'thank-you page');

      await context.close();
    },
  );
});
