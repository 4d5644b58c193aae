/**
 * The decisions an erasure makes about copies inside other records (scrub.ts), one by one: which AI quotes are the
 * person's (through the redactor's placeholders), what happens to a theme that falls under the threshold, and what
 * each scope does to each kind of event.
 */
import { describe, expect, it } from 'vitest';
import {
  analysisHolds,
  eventHolds,
  eventPlan,
  quotes,
  scrubAnalysis,
  scrubSyncErrors,
  type Person,
} from '../../server/src/modules/privacy/scrub.js';

const person: Person = {
  externalIds: new Set(['E-1']),
  responseIds: new Set(['rsp_A']),
  texts: new Map([['srv_1', ['Too many meetings: Ada loses every Tuesday to the planning marathon.']]]),
};

describe('quotes', () => {
  it('finds an excerpt through the placeholders the redactor wrote', () => {
    const text = 'Too many meetings: Ada loses every Tuesday to the planning marathon.';
    expect(quotes('Ada loses every Tuesday', text)).toBe(true);
    expect(quotes('[name] loses every Tuesday to the planning marathon', text)).toBe(true);
    expect(quotes('Too many meetings: [name] loses', text)).toBe(true);
    expect(quotes('marathon. Too many', text)).toBe(false);
    expect(quotes('Tuesday [name] loses', text)).toBe(false);
    // A quote of placeholders only could be anyone's.
    expect(quotes('[name] [email]', text)).toBe(false);
  });
});

const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `rsp_${i + from}`);

function analysis() {
  return {
    id: 'ana_1',
    surveyId: 'srv_1',
    responseSentiments: [...ids(6), 'rsp_A'].map((responseId) => ({ responseId, score: 0, label: 'neutral' })),
    themes: [
      {
        name: 'meetings',
        mentions: 5,
        share: 5 / 7,
        keywords: ['meetings'],
        responseIds: ['rsp_A', ...ids(4)],
        sentiment: -0.4,
        sampleQuotes: ['[name] loses every Tuesday', 'Meetings run long'],
      },
      {
        name: 'pay',
        mentions: 6,
        share: 6 / 7,
        keywords: ['pay'],
        responseIds: ['rsp_A', ...ids(5)],
        sentiment: -0.1,
        sampleQuotes: ['Pay is low'],
      },
    ],
    actions: [
      { text: 'Cut meetings', priority: 'high', basis: 'theme', theme: 'meetings', questionId: null },
      { text: 'Review pay', priority: 'medium', basis: 'theme', theme: 'pay', questionId: null },
    ],
    recommendations: ['Cut meetings', 'Review pay'],
    anonymity: { threshold: 5, suppressed: false, suppressedThemes: 0, suppressedQuestions: 0 },
  };
}

describe('scrubAnalysis', () => {
  it('keeping responses, removes only the quotes of her text', () => {
    const plan = scrubAnalysis(analysis(), 'srv_1', person, 'identity');
    expect(plan.kind).toBe('replace');
    const result = (plan as unknown as { data: ReturnType<typeof analysis> }).data;
    expect(result.themes.map((t) => t.sampleQuotes)).toEqual([['Meetings run long'], ['Pay is low']]);
    expect(result.themes[0]!.responseIds).toContain('rsp_A');
    expect(result.responseSentiments).toHaveLength(7);
  });

  it('with her responses, removes her ids and drops a theme left under the threshold, with its action', () => {
    const plan = scrubAnalysis(analysis(), 'srv_1', person, 'identity_and_responses');
    const result = (plan as unknown as { data: ReturnType<typeof analysis> }).data;
    expect(result.themes.map((t) => [t.name, t.mentions, t.responseIds.includes('rsp_A')])).toEqual([
      ['pay', 5, false],
    ]);
    expect(result.themes[0]!.share).toBeCloseTo(5 / 6);
    expect(result.responseSentiments.map((r) => r.responseId)).not.toContain('rsp_A');
    expect(result.actions.map((a) => a.theme)).toEqual(['pay']);
    expect(result.recommendations).toEqual(['Review pay']);
    expect(result.anonymity.suppressedThemes).toBe(1);
  });

  it('leaves an analysis that does not hold her as it is', () => {
    const other = { ...analysis(), responseSentiments: [], themes: [] };
    expect(analysisHolds(other, 'srv_1', person)).toBe(false);
    expect(scrubAnalysis(other, 'srv_1', person, 'identity_and_responses')).toEqual({ kind: 'keep' });
  });
});

describe('eventPlan', () => {
  const submitted = (data: object) => ({ id: 'evt_1', type: 'response.submitted', data });

  it('deletes her responses’ events with them, or forgets her id on them', () => {
    const identified = submitted({ id: 'rsp_A', respondentExternalId: 'E-1', answers: [] });
    expect(eventPlan(identified, person, 'identity_and_responses')).toEqual({ kind: 'delete' });
    expect(eventPlan(identified, person, 'identity')).toEqual({
      kind: 'replace',
      data: { id: 'rsp_A', respondentExternalId: null, answers: [] },
    });
    // A confidential survey's event never named her: it holds her answers, which only go with the responses.
    const confidential = submitted({ id: 'rsp_A', respondentExternalId: null, answers: [] });
    expect(eventHolds(confidential, person)).toBe(true);
    expect(eventPlan(confidential, person, 'identity')).toEqual({ kind: 'keep' });
    expect(eventPlan(confidential, person, 'identity_and_responses')).toEqual({ kind: 'delete' });
    expect(eventHolds(submitted({ id: 'rsp_B', respondentExternalId: 'E-2' }), person)).toBe(false);
  });

  it('removes her id from sync errors and keeps the rest', () => {
    const errors = [
      { index: 0, externalId: 'E-1', message: 'bad e-mail' },
      { index: 1, externalId: 'E-2', message: 'bad date' },
    ];
    const event = { id: 'evt_2', type: 'respondents.sync.completed', data: { jobId: 'job_1', errors } };
    expect(eventPlan(event, person, 'identity')).toEqual({
      kind: 'replace',
      data: { jobId: 'job_1', errors: [{ ...errors[0], externalId: null }, errors[1]] },
    });
    expect(scrubSyncErrors([errors[1]!], person)).toEqual({ kind: 'keep' });
  });

  it('treats an AI event as its analysis', () => {
    const event = { id: 'evt_3', type: 'analytics.ai.completed', data: analysis() };
    expect(eventPlan(event, person, 'identity')).toEqual(scrubAnalysis(analysis(), 'srv_1', person, 'identity'));
    expect(eventHolds({ id: 'evt_4', type: 'survey.launched', data: { id: 'srv_1' } }, person)).toBe(false);
  });
});
