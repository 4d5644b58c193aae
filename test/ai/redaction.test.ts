/**
 * Personal data in answers, whichever provider analyses them: one hostile set (test/ai/hostile.ts) through the
 * offline provider and through the OpenAI-compatible one (a fake server on 127.0.0.1), over real HTTP with the
 * SDK. Checked: what the remote model received (redacted answers, benign text intact), and every text field of
 * the result the API hands out (quotes, theme names, keywords, summary, recommendations, language), even when
 * the model echoes personal data on its own. Names are those of the analysed organization and environment only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { nameCandidates } from '../../server/src/modules/ai/redact.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { commentsOf, startFakeOpenAi, type FakeOpenAi, type ReceivedRequest } from './fake-openai.js';
import { aiTenant, finished, launchedSurvey, startAnalysis, submitComments, type AiAnalysis } from './fixtures.js';
import { createRespondents, hostileFocus, leaks, redacted, topics, written } from './hostile.js';

let offline: TestService;
let remote: TestService;
let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  [offline, remote] = await Promise.all([
    startTestService(),
    startTestService({
      ai: {
        ...loadConfig([]).ai,
        provider: 'openai-compatible',
        baseUrl: fake.url,
        model: 'fake-model-1',
        timeoutMs: 5000,
        maxAttempts: 1,
        retryBaseMs: 50,
      },
    }),
  ]);
});
afterAll(async () => {
  await offline?.close();
  await remote?.close();
  await fake?.close();
});

/** A tenant with the respondents, a threshold of 3 (so every comment of the four 3-comment topics is quoted), and the
 * answers. */
async function hostileSurvey(t: TestService) {
  const ours = await aiTenant(t);
  const other = await aiTenant(t);
  await createRespondents(ours, other);
  const settings = await ours.live.PATCH('/api/v1/settings/analytics', { body: { anonymityThreshold: 3 } });
  expect(settings.response.status).toBe(200);
  const survey = await launchedSurvey(ours.live);
  await submitComments(ours.live, survey.id, written);
  return { tenant: ours, client: ours.live, survey };
}

/** Every text of a result that could echo an answer. */
function texts(analysis: AiAnalysis): string[] {
  return [
    ...analysis.themes.flatMap((th) => [...th.sampleQuotes, th.name, ...th.keywords]),
    analysis.summary ?? '',
    analysis.language ?? '',
    ...analysis.recommendations,
    ...analysis.actions.flatMap((a) => [a.text, a.theme ?? '']),
  ];
}

function expectClean(analysis: AiAnalysis) {
  for (const text of texts(analysis)) expect(leaks(text), text).toEqual([]);
  // Redaction markers never become words of their own.
  for (const theme of analysis.themes) {
    for (const term of [theme.name, ...theme.keywords])
      expect(['name', 'email', 'phone', 'url']).not.toContain(term.replace(/[[\]]/g, ''));
  }
}

const sorted = (values: readonly string[]) => [...values].sort();

describe('offline provider', () => {
  it('quotes answers only after redaction, and no other field carries personal data', async () => {
    const { client, survey } = await hostileSurvey(offline);
    const analysis = await finished(
      client,
      survey.id,
      (await startAnalysis(client, survey.id, { focus: hostileFocus })).id,
    );
    expect(analysis.status, JSON.stringify(analysis)).toBe('completed');
    expect(analysis).toMatchObject({
      provider: 'offline',
      commentCount: written.length,
      anonymity: { threshold: 3, suppressed: false },
    });
    expectClean(analysis);
    // Every answer is quoted, redacted exactly: e-mails, phones and our respondents' names gone, the rest intact
    // (figures, dates, "will", "bell", "Priyanka", another organization's "Thorsten Kowalczyk").
    expect(analysis.themes.map((th) => th.name).sort()).toEqual(['meetings', 'office', 'pay and benefits', 'tools']);
    expect(sorted(analysis.themes.flatMap((th) => th.sampleQuotes))).toEqual(sorted(redacted));
    expect(analysis.summary).toContain('On the focus "Meetings, as [name] [name] ([email]) asked"');
  });
});

/** A model that groups the comments it got, quotes them, and adds personal data of its own everywhere it can. */
function echoingModel(request: ReceivedRequest): string {
  const comments = commentsOf(request);
  return JSON.stringify({
    language: 'en',
    sentiments: comments.map((c) => ({ comment: c.n, score: -0.5 })),
    themes: topics.map((topic) => {
      const members = comments.filter((c) => topic.word.test(c.text));
      const meetings = topic.name === 'meetings';
      return {
        name: meetings ? 'Meetings with Priya' : topic.name,
        keywords: [topic.name, 'priya', 'sam.tester@corp.example', '+44 20 7946 0958'],
        comments: members.map((c) => c.n),
        quotes: members.slice(0, 3).map((c) => c.text),
        recommendation: meetings ? 'Ask Will Bell at +1 (555) 123-4567 about meetings.' : `Act on ${topic.name}.`,
      };
    }),
    summary:
      'Priya Raghunathan (sam.tester@corp.example, +44 20 7946 0958) and Thorsten Kowalczyk mostly raised meetings.',
  });
}

describe('openai-compatible provider', () => {
  it('sends the answers redacted, quotes them redacted, and redacts what the model writes', async () => {
    const { client, survey } = await hostileSurvey(remote);
    fake.behave((request) => ({ kind: 'content', content: echoingModel(request) }));
    const analysis = await finished(
      client,
      survey.id,
      (await startAnalysis(client, survey.id, { focus: hostileFocus })).id,
    );
    expect(analysis.status, JSON.stringify(analysis)).toBe('completed');

    // What left the service.
    expect(fake.received).toHaveLength(1);
    const sent = fake.received[0]!;
    expect(sorted(commentsOf(sent).map((c) => c.text))).toEqual(sorted(redacted));
    for (const message of sent.body.messages) expect(leaks(message.content), message.content).toEqual([]);
    expect(sent.raw).toContain('Focus: Meetings, as [name] [name] ([email]) asked');

    // What the API hands out.
    expect(analysis).toMatchObject({ provider: 'openai-compatible', commentCount: written.length, language: 'en' });
    expectClean(analysis);
    expect(sorted(analysis.themes.flatMap((th) => th.sampleQuotes))).toEqual(sorted(redacted));
    const meetings = analysis.themes.find((th) => th.name === 'meetings with [name]');
    expect(meetings, JSON.stringify(analysis.themes)).toBeDefined();
    expect(meetings!.keywords).toEqual(['meetings']);
    expect(analysis.summary).toBe('[name] [name] ([email], [phone]) and Thorsten Kowalczyk mostly raised meetings.');
    expect(analysis.actions.find((a) => a.theme === 'meetings with [name]')).toMatchObject({
      text: 'Ask [name] [name] at [phone] about meetings.',
    });
  });
});

describe('looking up names', () => {
  it('finds the name parts among the given words (lower case or as stored), in the organization and environment analysed', async () => {
    const { respondentNamePartsAmong } = await import('../../server/src/modules/respondents/repository.js');
    const { tenant } = await hostileSurvey(offline);
    const live = { organizationId: tenant.organizationId, environment: 'LIVE' as const };
    // The caller sends each word in lower case and as written; "WILL" is neither of "Will".
    const words = ['priya', 'raghunathan', 'Łukasz', 'bell', 'priyanka', 'thorsten', 'kowalczyk', 'meetings', 'WILL'];
    expect(sorted(await respondentNamePartsAmong(offline.db, live, words))).toEqual(
      sorted(['Priya', 'Raghunathan', 'Łukasz', 'Bell']),
    );
    expect(await respondentNamePartsAmong(offline.db, { ...live, environment: 'TEST' }, words)).toEqual(['Priyanka']);
    expect(await respondentNamePartsAmong(offline.db, live, [])).toEqual([]);
    // From the words of a text: any case of a name that is not an English word, whatever the database's locale.
    expect(
      await respondentNamePartsAmong(offline.db, live, nameCandidates(['ŁUKASZ wrote to łukasz and WIŚNIEWSKI'])),
    ).toEqual(expect.arrayContaining(['Łukasz', 'Wiśniewski']));
  });
});
