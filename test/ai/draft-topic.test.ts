/**
 * Offline drafts keep to their prompt's subject, hold the question types it names, have the count asked for, and
 * are accepted by createSurvey as returned. The labelled prompts (`data/draft-prompts.tsv`: theme, named types,
 * questionCount, prompt) are judged by `draft-judge.ts`, whose vocabulary per theme is its own, not the question
 * bank's: a question counts as on the subject when its own words say so. The unseen prompts of
 * `data/draft-prompts-unseen.tsv` are the benchmark's alone (`npm run bench -- ai-drafts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOffline } from '../../server/src/modules/ai/offline-generate.js';
import { draftProblems } from '../../server/src/modules/ai/service.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  CLEAR_MAJORITY,
  judge,
  loadPrompts,
  promptsPath,
  themeVocabulary,
  type LabelledPrompt,
} from './draft-judge.js';
import { aiTenant } from './fixtures.js';

const set = loadPrompts(promptsPath);
const draftOf = (labelled: LabelledPrompt, questionCount = labelled.expectedCount) =>
  generateOffline({ prompt: labelled.prompt, questionCount });
const share = (v: { onTheme: number; total: number }) => v.onTheme / v.total;

/** Every labelled prompt whose draft of `questionCount` questions is not clearly on its theme, with the reason. */
function offSubject(questionCount?: number): string[] {
  return set.flatMap((labelled) => {
    const verdict = judge(labelled, draftOf(labelled, questionCount).questions ?? []);
    return share(verdict) >= CLEAR_MAJORITY
      ? []
      : [`${labelled.prompt} (${labelled.theme}): ${verdict.onTheme}/${verdict.total}; ${verdict.offTheme.join('; ')}`];
  });
}

describe('the labelled prompts and their judge', () => {
  it('cover every theme, every question type a prompt can name, and long drafts', () => {
    for (const theme of Object.keys(themeVocabulary))
      expect(set.filter((l) => l.theme === theme).length, theme).toBeGreaterThanOrEqual(2);
    const named = new Set(set.flatMap((l) => l.types));
    for (const type of ['nps', 'rating', 'ranking', 'matrix', 'yes_no', 'date', 'number', 'text'])
      expect(named.has(type), type).toBe(true);
    expect(set.filter((l) => l.expectedCount >= 20).length).toBeGreaterThanOrEqual(4);
  });

  it('tells themes apart: a draft is rarely on the theme of another audience', () => {
    // Without this, a judge that finds every question on every theme would pass the tests below.
    let sum = 0;
    let n = 0;
    for (const labelled of set) {
      const questions = draftOf(labelled, 8).questions ?? [];
      const audience = themeVocabulary[labelled.theme]!.audience;
      for (const [theme, { audience: other }] of Object.entries(themeVocabulary))
        if (other !== audience) {
          sum += share(judge({ ...labelled, theme }, questions));
          n++;
        }
    }
    // Measured: 6.2 % of a draft's questions on average.
    expect(sum / n).toBeLessThan(0.15);
  });
});

describe('offline drafts on their prompt’s subject', () => {
  it('gives every labelled prompt a clear majority of questions on its theme, with the types it names', () => {
    let onTheme = 0;
    let total = 0;
    const missing: string[] = [];
    for (const labelled of set) {
      const draft = draftOf(labelled);
      const verdict = judge(labelled, draft.questions ?? []);
      onTheme += verdict.onTheme;
      total += verdict.total;
      if (verdict.missingTypes.length > 0) missing.push(`${labelled.prompt}: no ${verdict.missingTypes.join(', ')}`);
      expect(verdict.countHonoured, labelled.prompt).toBe(true);
      expect(draftProblems(draft), labelled.prompt).toEqual([]);
    }
    expect(offSubject()).toEqual([]);
    expect(missing).toEqual([]);
    // Measured: 974 of 1034 questions (94.2 %); the generator before: 827 of 1034 (80.0 %), 18 drafts under 2/3.
    expect(onTheme / total, `${onTheme}/${total}`).toBeGreaterThanOrEqual(0.9);
  });

  it('stays on the subject in short and long drafts', () => {
    for (const questionCount of [3, 15, 20]) expect(offSubject(questionCount), `${questionCount}`).toEqual([]);
    // Thirty questions exhaust the smaller topics: the related topics fill, still mostly on the subject.
    let onTheme = 0;
    let total = 0;
    for (const labelled of set) {
      const verdict = judge(labelled, draftOf(labelled, 30).questions ?? []);
      onTheme += verdict.onTheme;
      total += verdict.total;
    }
    // Measured: 79.5 %.
    expect(onTheme / total).toBeGreaterThanOrEqual(0.75);
  });

  it('drafts a wellbeing survey for a customer support team as one for its staff', () => {
    const labelled = set.find((l) => l.prompt === 'Wellbeing check-in for the customer support team')!;
    const questions = draftOf(labelled).questions ?? [];
    expect(share(judge(labelled, questions))).toBeGreaterThanOrEqual(7 / 8);
    // None of a customer support survey's questions: the team answers about itself, not about a ticket.
    const supportTexts = /\b(issue|ticket|contacted you|contact us|support you received|resolved)\b/i;
    expect(questions.filter((q) => supportTexts.test(q.text)).map((q) => q.text)).toEqual([]);
  });

  it('puts the NPS question a prompt names into drafts whose subject has none', () => {
    for (const prompt of ['Customer NPS survey', 'Product NPS for our SaaS users', 'Employee satisfaction with an NPS'])
      expect(
        draftOf({ theme: 'engagement', types: [], prompt, expectedCount: 8 }).questions!.filter(
          (q) => q.type === 'nps',
        ),
        prompt,
      ).toHaveLength(1);
    // An employee's NPS asks about the employer, a customer's about us.
    const staff = draftOf({ theme: 'engagement', types: [], prompt: 'Staff survey with an NPS', expectedCount: 8 });
    expect(staff.questions!.find((q) => q.type === 'nps')!.text).toMatch(/place to work/);
  });
});

describe('offline drafts through HTTP', () => {
  let t: TestService;
  let client: Awaited<ReturnType<typeof aiTenant>>['live'];
  beforeAll(async () => {
    t = await startTestService();
    client = (await aiTenant(t)).live;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('generates every labelled draft with its count, its theme and its types, and createSurvey takes it back as is', async () => {
    const wrong: string[] = [];
    for (const labelled of set) {
      const body = {
        prompt: labelled.prompt,
        ...(labelled.questionCount === undefined ? {} : { questionCount: labelled.questionCount }),
      };
      const generated = await client.POST('/api/v1/surveys/generate', { body });
      expect(generated.response.status, `${labelled.prompt}: ${JSON.stringify(generated.error)}`).toBe(201);
      const survey = generated.data!.data;
      const verdict = judge(labelled, survey.questions);
      if (survey.questions.length !== labelled.expectedCount)
        wrong.push(`${labelled.prompt}: ${survey.questions.length} questions, asked ${labelled.expectedCount}`);
      if (share(verdict) < CLEAR_MAJORITY)
        wrong.push(`${labelled.prompt}: ${verdict.onTheme}/${verdict.total} on ${labelled.theme}`);
      if (verdict.missingTypes.length > 0) wrong.push(`${labelled.prompt}: no ${verdict.missingTypes.join(', ')}`);
      // The draft exactly as returned, as a new survey.
      const copy = await client.POST('/api/v1/surveys', { body: survey as never });
      if (copy.response.status !== 201) wrong.push(`${labelled.prompt}: createSurvey ${JSON.stringify(copy.error)}`);
      else expect(copy.data!.data.questions, labelled.prompt).toEqual(survey.questions);
    }
    expect(wrong).toEqual([]);
  });

  it('honours the count a prompt states, and a questionCount over it', async () => {
    const stated = await client.unwrap(
      client.POST('/api/v1/surveys/generate', { body: { prompt: 'Annual employee survey, 20 questions' } }),
    );
    expect(stated.questions).toHaveLength(20);
    const asked = await client.unwrap(
      client.POST('/api/v1/surveys/generate', {
        body: { prompt: 'Annual employee survey, 20 questions', questionCount: 12 },
      }),
    );
    expect(asked.questions).toHaveLength(12);
    const inWords = await client.unwrap(
      client.POST('/api/v1/surveys/generate', { body: { prompt: 'A twenty-question wellbeing survey for nurses' } }),
    );
    expect(inWords.questions).toHaveLength(20);
  });
});
