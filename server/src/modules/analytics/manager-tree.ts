/**
 * The breakdown `managerTree`: a manager's whole organization, their direct reports, and one sub-organization per
 * direct report who manages others, from the chains of managers frozen with each response (as asked).
 *
 * The rows overlap (the organization is the union of the others), so the subtraction guard is applied to what
 * they are parts of. The direct reports and the sub-organizations partition the organization; the organization
 * and the rest of the survey (everyone else, the manager included) partition the whole, which is always shown.
 * So the organization is shown only when the rest is empty or at least the threshold (else whole − organization
 * would be the rest), and then the guard runs over the organization's parts; when it is hidden, the rest counts
 * as one more hidden part of the whole, and the guard runs over the parts and the rest together. Either way no
 * suppressed part is ever the difference of shown rows.
 */
import type { Db } from '../../db/database.js';
import * as repository from './repository.js';
import type { AnalyticsScope, CellRow, NumberValuesRow, TreeSizeRow } from './repository.js';
import { histogramsByPosition, type Histogram } from './statistics.js';
import { orderGroups, resultSuppressed, suppressedGroups } from './suppression.js';

export interface TreeGroup {
  group: 'organization' | 'directReports' | 'subOrganization';
  /** The manager for the organization and the direct reports; the direct report for a sub-organization. */
  value: string;
  responses: number;
  respondents: number;
  suppressed: boolean;
  histograms: Map<number, Histogram>;
  /** The answers of number questions, by question id (none when suppressed): cells do not hold them. */
  numbers: Map<string, number[]>;
}

const keyOf = (kind: 'direct' | 'sub', value: string | null) => `${kind}:${value ?? ''}`;

/** The rows of `manager`'s tree with the anonymity rules applied; suppressed rows carry no histograms. */
export function managerTreeGroups(
  manager: string,
  sizes: readonly TreeSizeRow[],
  cells: readonly CellRow[],
  threshold: number,
  numbers: readonly NumberValuesRow[] = [],
): TreeGroup[] {
  const sized = (kind: TreeSizeRow['kind']) =>
    sizes.find((row) => row.kind === kind) ?? { responses: 0, respondents: 0 };
  const organization = sized('organization');
  const rest = sized('rest');
  const parts = sizes
    .filter((row) => row.kind === 'direct' || row.kind === 'sub')
    .map((row) => ({
      key: keyOf(row.kind as 'direct' | 'sub', row.value),
      group: row.kind === 'direct' ? ('directReports' as const) : ('subOrganization' as const),
      value: row.kind === 'direct' ? manager : row.value!,
      responses: row.responses,
      respondents: row.respondents,
    }));
  const organizationShown =
    !resultSuppressed(organization.respondents, threshold) &&
    (rest.respondents === 0 || !resultSuppressed(rest.respondents, threshold));
  // The rest is never shown on its own row: when it is a hidden part, it is listed last and only counts.
  const guarded = [
    ...parts.map((part) => ({ respondents: part.respondents, value: part.key })),
    ...(organizationShown || rest.respondents === 0 ? [] : [{ respondents: rest.respondents, value: 'rest' }]),
  ];
  const hidden = suppressedGroups(guarded, threshold);

  const cellsOf = new Map<string | null, { code: number; n: number }[]>();
  for (const cell of cells) {
    if (cell.code < 0) continue; // day codes: the rows' sizes come from `sizes`
    const key = cell.whole ? null : cell.segment;
    const list = cellsOf.get(key);
    if (list) list.push(cell);
    else cellsOf.set(key, [cell]);
  }
  const histogramsOf = (key: string | null, suppressed: boolean) =>
    suppressed ? new Map<number, Histogram>() : histogramsByPosition(cellsOf.get(key) ?? []);
  const numbersOf = (key: string | null, suppressed: boolean) =>
    new Map(
      suppressed
        ? []
        : numbers
            .filter((row) => (key === null ? row.whole : !row.whole && row.segment === key))
            .map((row) => [row.questionId, row.values] as const),
    );

  const directIndex = parts.findIndex((part) => part.group === 'directReports');
  const direct =
    directIndex < 0
      ? // Nobody reported to the manager directly: an empty row, suppressed like any group under the threshold.
        { group: 'directReports' as const, value: manager, responses: 0, respondents: 0, suppressed: true }
      : { ...parts[directIndex]!, suppressed: hidden.has(directIndex) };
  const subOrganizations = orderGroups(
    parts.flatMap((part, index) =>
      part.group === 'subOrganization' ? [{ ...part, suppressed: hidden.has(index) }] : [],
    ),
  );
  return [
    {
      group: 'organization',
      value: manager,
      responses: organization.responses,
      respondents: organization.respondents,
      suppressed: !organizationShown,
      histograms: histogramsOf(null, !organizationShown),
      numbers: numbersOf(null, !organizationShown),
    },
    {
      ...direct,
      histograms: histogramsOf(keyOf('direct', null), direct.suppressed),
      numbers: numbersOf(keyOf('direct', null), direct.suppressed),
    },
    ...subOrganizations.map((part) => ({
      group: part.group,
      value: part.value,
      responses: part.responses,
      respondents: part.respondents,
      suppressed: part.suppressed,
      histograms: histogramsOf(part.key, part.suppressed),
      numbers: numbersOf(part.key, part.suppressed),
    })),
  ];
}

/** `manager`'s tree over `scope`, read, with the anonymity rules applied: how static and smart analytics get it. */
export async function measureManagerTree(
  db: Db,
  scope: AnalyticsScope,
  manager: string,
  threshold: number,
  /** The survey's number questions, whose figures come from their answers. */
  numberQuestionIds: readonly string[] = [],
): Promise<TreeGroup[]> {
  const [sizes, cells, numbers] = await Promise.all([
    repository.treeSizes(db, scope, manager),
    repository.treeCellCounts(db, scope, manager),
    repository.treeNumberValues(db, scope, manager, numberQuestionIds),
  ]);
  return managerTreeGroups(manager, sizes, cells, threshold, numbers);
}
