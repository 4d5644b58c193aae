/**
 * The anonymity rules, pure so that they are property-tested on their own:
 *
 * 1. a group with fewer respondents than the threshold is suppressed;
 * 2. the subtraction guard: the total is always shown, so the suppressed groups together are "total minus the
 *    shown groups". While they hold fewer respondents than the threshold (and some are suppressed), the smallest
 *    shown group is suppressed too — as Glint and Peakon do.
 */
export const DEFAULT_ANONYMITY_THRESHOLD = 5;
export const MINIMUM_ANONYMITY_THRESHOLD = 3;

export interface GroupSize {
  respondents: number;
  /** The group's value: ties between equally small groups are broken by it, never by the order groups come in. */
  value?: string | null;
}

/** Values in one fixed order (the null group last), whatever order a query returned the groups in. */
export function compareValues(a: string | null | undefined, b: string | null | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return a < b ? -1 : 1;
}

/**
 * Indexes of the groups to suppress. Ties between equally small groups are broken by value, so that every way of
 * computing one breakdown (exact counts, a scan, distinct respondents) hides the same group: were it the order of
 * the rows, two requests could hide different tied groups and together give away the small one.
 */
export function suppressedGroups(groups: readonly GroupSize[], threshold: number): Set<number> {
  const suppressed = new Set<number>();
  let hidden = 0;
  groups.forEach((group, index) => {
    if (group.respondents < threshold) {
      suppressed.add(index);
      hidden += group.respondents;
    }
  });
  const shownBySize = groups
    .map((group, index) => ({ index, respondents: group.respondents }))
    .filter((group) => !suppressed.has(group.index))
    .sort(
      (a, b) =>
        a.respondents - b.respondents ||
        compareValues(groups[a.index]!.value, groups[b.index]!.value) ||
        a.index - b.index,
    );
  for (const next of shownBySize) {
    if (suppressed.size === 0 || hidden >= threshold) break;
    suppressed.add(next.index);
    hidden += next.respondents;
  }
  return suppressed;
}

/** A whole (filtered) result is shown only when it covers at least `threshold` respondents. */
export const resultSuppressed = (respondents: number, threshold: number) => respondents < threshold;

/** Why the rules above hide a group: too small itself, or hidden by the subtraction guard. */
export const hiddenReason = (respondents: number, threshold: number): 'threshold' | 'complement' =>
  resultSuppressed(respondents, threshold) ? 'threshold' : 'complement';

/** Shown groups first, largest first; then the suppressed ones (in an order that says nothing about their size). */
export function orderGroups<T extends { suppressed: boolean; responses: number; value: string | null }>(
  groups: T[],
): T[] {
  const byValue = (a: T, b: T) => compareValues(a.value, b.value);
  return [...groups].sort((a, b) => {
    if (a.suppressed !== b.suppressed) return a.suppressed ? 1 : -1;
    if (a.suppressed) return byValue(a, b);
    return b.responses - a.responses || byValue(a, b);
  });
}
