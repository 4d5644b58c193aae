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
const [ours, afinn, vader] = Object.values(classifiers) as [
  (typeof classifiers)[string],
  (typeof classifiers)[string],
  (typeof classifiers)[string],
];

describe('offline sentiment quality', () => {
  it('the set has at least 300 comments of every label and kind', () => {
    expect(set.length).toBeGreaterThanOrEqual(300);
    for (const label of ['positive', 'neutral', 'negative'])
      expect(set.filter((c) => c.label === label).length).toBeGreaterThan(50);
    for (const kind of ['plain', 'negation', 'sarcasm', 'mixed', 'short'])
      expect(set.filter((c) => c.kind === kind).length).toBeGreaterThanOrEqual(25);
  });

  for (const [name, subset] of [
    ['the whole set', set],
    ['the held-out half', set.filter((_, i) => i % 2 === 1)],
  ] as const) {
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
  const redact = redactor(['Priya', 'Raghunathan', "O'Neil", 'Will', 'Mary-Ann Rose']);
  it("removes e-mails, phone numbers, URLs and respondents' names, and nothing else", () => {
    expect(redact('Mail priya.r+hr@corp.example.co.uk or call +44 (20) 7946-0958 / 555 123 4567.')).toBe(
      'Mail [email] or call [phone] / [phone].',
    );
    expect(redact('Write to łukasz.wiśniewski@firma.example.pl or PRIYA.R@Corp-Mail.Example.com')).toBe(
      'Write to [email] or [email]',
    );
    expect(redact('See https://wiki.corp.example/x?y=1 and www.example.org, or intranet.example.com/pulse')).toBe(
      'See [url] and [url], or [url]',
    );
    // A name that is only a name goes in any case; one that is also a word only when capitalised.
    expect(redact("Priya Raghunathan and O'Neil said Will will help; priya's idea, o’neil's too.")).toBe(
      '[name] [name] and [name] said [name] will help; [name] idea, [name] too.',
    );
    expect(redact("Priya's team, RAGHUNATHAN's plan")).toBe('[name] team, [name] plan');
    expect(redact('Mary-Ann Rose rose early; mary-ann too.')).toBe(
      '[name]-[name] [name] rose early; [name]-[name] too.',
    );
    // Whole words only.
    expect(redact('Priyanka and Willow, willing.')).toBe('Priyanka and Willow, willing.');
    expect(redact('We shipped 3 releases in 2024, scored 4.5 of 5, in Q3.')).toBe(
      'We shipped 3 releases in 2024, scored 4.5 of 5, in Q3.',
    );
  });

  it('finds phone numbers in international and national spellings, and leaves figures, dates and times', () => {
    const phones = [
      '+44 20 7946 0958',
      '+44 (0) 20 7946 0958',
      '(+44) 20 7946 0958',
      '+1 (555) 123-4567',
      '+1-555-123-4567',
      '+1.555.123.4567',
      '(555) 123-4567',
      '555.123.4567',
      '555 - 123 - 4567',
      '(020) 7946-0958',
      '030/1234567',
      '0049 30 12345678',
      '+33 6 12 34 56 78',
      '+49 (0)30 1234 5678',
      '07700 900123',
      '+31 6 1234 5678',
      '5551234567',
    ];
    for (const phone of phones) expect(redact(`Call ${phone}, thanks.`), phone).toBe('Call [phone], thanks.');
    const figures = [
      'We had 3 meetings on 12 May at 9:30.',
      'Since 2019-2021 nothing changed.',
      'Paid on 2024-03-15 and 15.03.2024 (or 03/15/2024).',
      'A raise of 2.5 % in Q3 2024, top 10, version 2.0.1.',
      'From 12.05.2024 - 15.05.2024 we were away.',
      'Room 101, floor 4, 20% fewer.',
    ];
    for (const text of figures) expect(redact(text)).toBe(text);
  });

  it('is idempotent, so redacting twice changes nothing', () => {
    const text = 'Ask Priya (priya@corp.example, +44 20 7946 0958) or see www.example.org';
    expect(redact(redact(text))).toBe(redact(text));
  });
});
