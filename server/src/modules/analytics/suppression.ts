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
}

/** Indexes of the groups to suppress. Ties between equally small groups go to the earlier one (stable). */
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
    .sort((a, b) => a.respondents - b.respondents || a.index - b.index);
  for (const next of shownBySize) {
    if (suppressed.size === 0 || hidden >= threshold) break;
    suppressed.add(next.index);
    hidden += next.respondents;
  }
  return suppressed;
}

/** A whole (filtered) result is shown only when it covers at least `threshold` respondents. */
export const resultSuppressed = (respondents: number, threshold: number) => respondents < threshold;

/** Shown groups first, largest first; then the suppressed ones (in an order that says nothing about their size). */
export function orderGroups<T extends { suppressed: boolean; responses: number; value: string | null }>(groups: T[]): T[] {
  const byValue = (a: T, b: T) => (a.value === null ? 1 : b.value === null ? -1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
  return [...groups].sort((a, b) => {
    if (a.suppressed !== b.suppressed) return a.suppressed ? 1 : -1;
    if (a.suppressed) return byValue(a, b);
    return b.responses - a.responses || byValue(a, b);
  });
}
