/**
 * Discrepancies the model found between the product's promise and the server, each with its focused test
 * (data-path.test.ts, "findings") that replays its minimal command sequence. When a comparison fails in a way one
 * of them explains, the failure names it. The first three were fixed in be69bdd ("Analytics: figures round half
 * away from zero for negatives too; the subtraction guard breaks ties by value …; an anonymous survey's link answer
 * leaves no time or response id on its recipient"); the two erasure findings were fixed with the retention work
 * (a forgotten person's responses share one opaque key in the analytics copy; the deletions list keeps whose deleted
 * response it was, for the erasure to find the files). Their tests now guard against regressions. Those in `OPEN`
 * are not fixed yet: their focused tests fail until they are.
 */
export const FINDINGS = {
  'negative-halves':
    'an NPS score exactly halfway between two tenths was rounded towards +∞ when negative (−93.75 → −93.7) but away from zero when positive (93.75 → 93.8)',
  'tie-order':
    'when the subtraction guard must hide one of several equally small groups, which one it hid followed the order PostgreSQL returned the groups in, which differs between ways of computing the same breakdown (exact counts, a scan, distinct respondents) and between query plans: asked twice, with and without a window that changes nothing, a breakdown could show each of the tied groups once, and the total then gave away the small group the guard protects',
  'anonymous-responded-at':
    "in an anonymous survey, a personal link's answer was stored without identity, but its recipient's `respondedAt` (listDistributionRecipients) was the response's `submittedAt` to the millisecond, so every anonymous answer given through a link could be tied to its person",
  'erased-respondents':
    "an erasure of `identity` promises that the person's responses keep counting and every figure stays, but the analytics copies lose their respondent id (analytics forgetSubjects) and distinct respondents are counted as `coalesce(respondent_external_id, response_id)`, so in a survey that takes several responses per person each of the erased person's responses becomes a respondent of its own: a result or group the anonymity threshold suppressed is shown afterwards (one person's 3 responses and another's 1 count as 4 respondents at threshold 3), exposing the other respondent's answer to whoever knows the erased person's",
  'erased-deleted-exports':
    "an erasure promises to reach every copy, but it finds the export files to delete (exports exportsHolding) by the person's responses as they are now: a file that holds a response of theirs deleted since (deleteResponse) still shows their respondentExternalId and answers, is neither counted in the inventory's `exportFiles` nor deleted, and stays downloadable until it expires",
} as const;

export type Finding = keyof typeof FINDINGS;

/** The findings the server has not fixed yet. */
export const OPEN: ReadonlySet<Finding> = new Set<Finding>([]);

/**
 * While on (the main property, not the focused tests), a comparison that an open finding explains is recorded in
 * `met` and the run goes on, so that a campaign still looks for other discrepancies; the test fails at its end.
 */
export const recording = { on: false };
/** The open findings the run met, with the first difference of each. */
export const met = new Map<Finding, string>();

/** Fails, naming the finding that explains the difference. */
export function found(finding: Finding, detail: string): never {
  throw new Error(`${finding}: ${FINDINGS[finding]}\n${detail}`);
}

/**
 * As `found`, but an open finding is only recorded while `recording` is on (the comparison then stops there), with
 * what the run did so far.
 */
export function foundOpen(finding: Finding, detail: string, log: readonly string[]): void {
  if (!(recording.on && OPEN.has(finding))) found(finding, detail);
  if (!met.has(finding)) met.set(finding, `${detail}\n\nWhat the run did:\n${log.join('\n')}`);
}
