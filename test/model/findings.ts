/**
 * Discrepancies the model found between the product's promise and the server, each with its focused test
 * (data-path.test.ts, "findings") that replays its minimal command sequence. When a comparison fails in a way one
 * of them explains, the failure names it. All three were fixed in be69bdd ("Analytics: figures round half away
 * from zero for negatives too; the subtraction guard breaks ties by value …; an anonymous survey's link answer
 * leaves no time or response id on its recipient"); their tests now guard against regressions.
 */
export const FINDINGS = {
  'negative-halves':
    'an NPS score exactly halfway between two tenths was rounded towards +∞ when negative (−93.75 → −93.7) but away from zero when positive (93.75 → 93.8)',
  'tie-order':
    'when the subtraction guard must hide one of several equally small groups, which one it hid followed the order PostgreSQL returned the groups in, which differs between ways of computing the same breakdown (exact counts, a scan, distinct respondents) and between query plans: asked twice, with and without a window that changes nothing, a breakdown could show each of the tied groups once, and the total then gave away the small group the guard protects',
  'anonymous-responded-at':
    "in an anonymous survey, a personal link's answer was stored without identity, but its recipient's `respondedAt` (listDistributionRecipients) was the response's `submittedAt` to the millisecond, so every anonymous answer given through a link could be tied to its person",
} as const;

export type Finding = keyof typeof FINDINGS;

/** Fails, naming the finding that explains the difference. */
export function found(finding: Finding, detail: string): never {
  throw new Error(`${finding}: ${FINDINGS[finding]}\n${detail}`);
}
