/**
 * Quality, measured on the labelled set (test/ai/data/comments.tsv, 308 employee comments): the offline
 * analyser must beat both baselines (AFINN `sentiment` and `vader-sentiment`) in accuracy and macro-F1, on the
 * whole set and on the held-out half (odd lines, never looked at while tuning), and cluster comments into
 * themes that match their known topics. The same code produces the BENCHMARKS.md numbers.
 */
import { describe, expect, it } from 'vitest';
import { classifiers, loadLabelled, score, themeQuality } from '../../scripts/bench/ai-quality.js';
import { redactor } from '../../server/src/modules/ai/redact.js';

const set = loadLabelled();
const [ours, afinn, vader] = Object.values(classifiers) as [typeof classifiers[string], typeof classifiers[string], typeof classifiers[string]];

describe('offline sentiment quality', () => {
  it('the set has at least 300 comments of every label and kind', () => {
    expect(set.length).toBeGreaterThanOrEqual(300);
    for (const label of ['positive', 'neutral', 'negative']) expect(set.filter((c) => c.label === label).length).toBeGreaterThan(50);
    for (const kind of ['plain', 'negation', 'sarcasm', 'mixed', 'short']) expect(set.filter((c) => c.kind === kind).length).toBeGreaterThanOrEqual(25);
  });

  for (const [name, subset] of [['the whole set', set], ['the held-out half', set.filter((_, i) => i % 2 === 1)]] as const) {
    it(`beats AFINN and VADER on ${name}`, () => {
      const o = score(ours, subset);
      for (const baseline of [afinn, vader]) {
        const b = score(baseline, subset);
        expect(o.accuracy).toBeGreaterThan(b.accuracy + 0.05);
        expect(o.macroF1).toBeGreaterThan(b.macroF1 + 0.05);
      }
    });
  }

  it('clusters comments into themes that match their known topics', () => {
    const quality = themeQuality(set);
    expect(quality.purity).toBeGreaterThan(0.7);
    expect(quality.coverage).toBeGreaterThan(0.9);
  });
});

describe('redaction', () => {
  const redact = redactor(['Priya', 'Raghunathan', "O'Neil", 'Will']);
  it('removes e-mails, phone numbers, URLs and respondents\' names, and nothing else', () => {
    expect(redact('Mail priya.r+hr@corp.example.co.uk or call +44 (20) 7946-0958 / 555 123 4567.')).toBe('Mail [email] or call [phone] / [phone].');
    expect(redact('See https://wiki.corp.example/x?y=1 and www.example.org, or intranet.example.com/pulse')).toBe('See [url] and [url], or [url]');
    expect(redact("Priya Raghunathan and O'Neil said Will will help; priya's idea.")).toBe("[name] [name] and [name] said [name] will help; priya's idea.");
    expect(redact("Priya's team")).toBe('[name] team');
    expect(redact('We shipped 3 releases in 2024, scored 4.5 of 5, in Q3.')).toBe('We shipped 3 releases in 2024, scored 4.5 of 5, in Q3.');
  });
});
