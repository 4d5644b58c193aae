/**
 * The gate every released analytics group passes: the audit of the survey's released results (release-audit.ts)
 * decides, and its state lives in PostgreSQL (`analytics_release_audits`), so it holds across requests, keys, API
 * processes and restarts.
 *
 * A request whose groups were all released before (their fingerprints are in `analytics_released_sets`: a dashboard
 * asking again while nothing changed) passes on one lookup. Otherwise the survey's audit row is locked, the groups'
 * responses are read, the audit decides each group in order (the whole result first, then the breakdown's rows),
 * and the state and the released fingerprints are saved in the same transaction.
 */
import type { Db } from '../../db/database.js';
import { audit, deserialise, emptyAudit, serialise } from './release-audit.js';
import type { TreeGroup } from './manager-tree.js';
import * as repository from './repository.js';
import type { AnalyticsScope } from './repository.js';

/** The audit's key of a segment's group and of a manager-tree row (repository.groupSets reads them under these). */
export const segmentKey = repository.segmentKey;
export const treeKey = (group: Pick<TreeGroup, 'group' | 'value'>) =>
  group.group === 'organization' ? 'organization' : group.group === 'directReports' ? 'direct' : `sub:${group.value}`;

export interface GateResult {
  /** Keys of the groups withheld because of what was released before. */
  withheld: Set<string>;
  /** Responses of each group as the audit saw them: the figures shown must be of the same sets. */
  responses: Map<string, number>;
}

/**
 * Decides `candidates` (group keys, in the order they are released: `whole` first when it is one). When the whole
 * result is withheld, nothing else is released (a result without its whole is not shown).
 */
export async function gateReleases(
  db: Db,
  scope: AnalyticsScope,
  threshold: number,
  candidates: readonly string[],
  manager?: string,
): Promise<GateResult> {
  if (candidates.length === 0) return { withheld: new Set(), responses: new Map() };
  const { tenant, surveyId } = scope;
  const prints = await repository.groupSets(db, scope, { manager, members: false });
  const byKey = new Map(prints.map((row) => [row.key, row]));
  const wanted = candidates.map((key) => byKey.get(key)?.fingerprint ?? '');
  const known = await repository.releasedFingerprints(db, tenant, surveyId, wanted);
  if (wanted.every((fingerprint) => known.has(fingerprint))) {
    return { withheld: new Set(), responses: new Map(prints.map((row) => [row.key, row.responses])) };
  }
  return db.transaction().execute(async (tx) => {
    const stored = await repository.lockAuditState(tx, tenant, surveyId);
    let state = stored === null ? emptyAudit() : deserialise(stored);
    const sets = new Map((await repository.groupSets(tx, scope, { manager, members: true })).map((r) => [r.key, r]));
    const withheld = new Set<string>();
    const released: string[] = [];
    // The whole result alone first: withheld, it takes the rest with it.
    const [first, ...rest] = candidates;
    const batches = first === 'whole' ? [[first], rest] : [[...candidates]];
    for (const batch of batches) {
      if (batch.length === 0) continue;
      if (withheld.has('whole')) {
        for (const key of batch) withheld.add(key);
        continue;
      }
      const decided = audit(
        state,
        batch.map((key) => sets.get(key)?.members ?? []),
        threshold,
      );
      state = decided.state;
      batch.forEach((key, i) => {
        if (decided.allowed[i]) released.push(sets.get(key)?.fingerprint ?? '');
        else withheld.add(key);
      });
    }
    await repository.saveAudit(tx, tenant, surveyId, serialise(state), released.filter(Boolean));
    return { withheld, responses: new Map([...sets].map(([key, row]) => [key, row.responses])) };
  });
}

/**
 * Puts the groups a result would show (key → responses as measured; the whole result first) to the audit. Returns
 * what to withhold, and whether a group moved between the measurement and the audit's own reading (a response
 * came or went): the caller then measures again, and after its last try withholds what moved.
 */
export async function auditShown(
  db: Db,
  scope: AnalyticsScope,
  threshold: number,
  shown: ReadonlyMap<string, number>,
  manager?: string,
): Promise<{ withheld: Set<string>; moved: boolean }> {
  const gate = await gateReleases(db, scope, threshold, [...shown.keys()], manager);
  const moved = [...shown].filter(([key, responses]) => gate.responses.get(key) !== responses).map(([key]) => key);
  return { withheld: new Set([...gate.withheld, ...moved]), moved: moved.length > 0 };
}

/** Runs `measure` until what it showed stood still for the audit, at most three times (the last one withholds). */
export async function measuredStill<T>(measure: (lastTry: boolean) => Promise<T | undefined>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const result = await measure(attempt === 3);
    if (result !== undefined) return result;
  }
}
