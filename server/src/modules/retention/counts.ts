/** A run's counts: what the preview reports and the run adds to, batch by batch. */
import type { RetentionCounts } from './tables.js';

export type SurveyCounts = RetentionCounts['surveys'][number];

/** The survey's entry in `counts`, added when it has none. */
export function surveyEntry(counts: RetentionCounts, surveyId: string): SurveyCounts {
  let entry = counts.surveys.find((s) => s.surveyId === surveyId);
  if (!entry) {
    entry = { surveyId, deletedResponses: 0, anonymizedResponses: 0, heldResponses: 0 };
    counts.surveys.push(entry);
    counts.surveys.sort((a, b) => (a.surveyId < b.surveyId ? -1 : a.surveyId > b.surveyId ? 1 : 0));
  }
  return entry;
}

/** Adds `n` responses of a survey under `kind`, to the survey's entry and to the total. */
export function addResponses(
  counts: RetentionCounts,
  surveyId: string,
  kind: 'deletedResponses' | 'anonymizedResponses' | 'heldResponses',
  n: number,
): void {
  if (n === 0) return;
  surveyEntry(counts, surveyId)[kind] += n;
  counts[kind] += n;
}
