/**
 * The audit of a survey's released groups: pure, no database, no HTTP (release-gate.ts stores it and asks it).
 *
 * A group is the set of responses one released figure covers. Every count, sum, mean, share, distribution and NPS
 * of a group is a sum over its responses (or a ratio of two such sums), so what the released figures together reveal
 * is a linear function of the responses in the span of the groups' 0/1 incidence rows. The audit keeps those rows
 * and releases a new group only when, with it:
 *
 * 1. the group itself has no fewer responses than the threshold (unless empty);
 * 2. no released group inside it, or around it, differs from it by 1 to threshold − 1 responses (a window and the
 *    whole, two polls of a live result, a segment and a manager's organization inside it);
 * 3. no single response is determined by any combination of released groups (Chin and Özsoyoğlu's audit of
 *    statistical databases): no unit vector lies in the row space. The audit also refuses when the sum of a set of
 *    2 to threshold − 1 responses that every released group either wholly contains or wholly misses (an atom) is
 *    determined, since that is a small group released by subtraction. A determined sum over several atoms (two
 *    people from different atoms summed) is not looked for: it reveals no single response, and finding it is the
 *    minimum-weight codeword problem. The nested rule catches its common form (one group inside another).
 *
 * Columns are atoms, not responses: responses that no released group tells apart are one column, so the matrix
 * has as many columns as the releases make distinct, and a response is determined only if its atom has size 1.
 *
 * Arithmetic is modular, over the prime P, and cannot wrongly allow:
 * - every row kept in the echelon form is independent mod P, hence independent over the rationals, so the kept rows'
 *   rank mod P equals their rank over the rationals; with the same pivot columns, the rational reduced echelon form
 *   reduces mod P to ours (its denominators divide the pivot minor, which is a unit mod P). A non-zero entry mod P
 *   is non-zero over the rationals, so a row that is not a unit vector mod P is not one over the rationals, and a
 *   unit vector of the rational row space is a row of ours: nothing determined is missed.
 * - a candidate that reduces to zero mod P is kept out of the form only once it is proved a rational combination of
 *   the kept groups: the coefficients (tracked mod P for each row) are reconstructed as fractions and the identity is
 *   checked exactly, in integers, over the atoms. When that fails the candidate is refused, which is the only error
 *   modular arithmetic can cause: refusing too much.
 * - each atom whose members the candidate only partly covers splits, and a split makes the candidate independent.
 */

/** Prime below 2^26.5: a product of two residues is below 2^53, exact in a double. */
const P = 94_906_249;
/** Rational reconstruction bound: |numerator|, denominator ≤ √(P / 2). */
const RECONSTRUCT = Math.floor(Math.sqrt((P - 1) / 2));
const FORMAT = 1;

export type Withheld = 'released_overlap';

interface Group {
  /** Responses in the group. */
  readonly size: number;
  /** Order-independent hash of its response indexes: finds a re-release without reading the state. */
  readonly hash: string;
  /** Membership over atom ids, one bit each; bits past the end are 0. */
  readonly bits: Uint32Array;
}

/**
 * One row of the reduced echelon form, sparse and sorted by column. Columns ≥ 0 are atoms; column −(k + 1) is the
 * coefficient of the k-th kept group in this row, so that each row says which released groups it combines.
 */
interface Row {
  readonly pivot: number;
  readonly cols: Int32Array;
  readonly vals: Int32Array;
}

/**
 * The released groups of one survey, over the universe of response keys seen so far. Treat it as an immutable
 * value: `audit` returns a new one and never changes the one given; store it with `serialise`.
 */
export interface AuditState {
  /** Responses in the universe; `keys[0..n)` are theirs. */
  readonly n: number;
  /**
   * Shared, append-only between a state and the states made from it: a state sees only indexes below its `n`, and
   * appends in place only while nothing past its `n` exists (otherwise it copies first).
   */
  readonly keys: string[];
  readonly index: Map<string, number>;
  /** Atom of each response; atom 0 holds the responses no released group contains. */
  readonly atomOf: Int32Array;
  readonly atomSize: Int32Array;
  readonly groups: readonly Group[];
  readonly byHash: ReadonlyMap<string, readonly number[]>;
  /** Groups whose rows make up the echelon form (the others are proved combinations of them). */
  readonly kept: readonly number[];
  readonly rows: readonly Row[];
}

export function emptyAudit(): AuditState {
  return {
    n: 0,
    keys: [],
    index: new Map(),
    atomOf: new Int32Array(0),
    atomSize: new Int32Array(1),
    groups: [],
    byHash: new Map(),
    kept: [],
    rows: [],
  };
}

/**
 * Decides each candidate group (in order; a candidate allowed earlier in the batch counts as released for the later
 * ones). Returns which are allowed and the new state including the allowed ones. Candidates equal (as sets) to a
 * released group are always allowed and add nothing; a refused candidate changes nothing.
 */
export function audit(
  state: AuditState,
  candidates: readonly (readonly string[])[],
  threshold: number,
): { allowed: boolean[]; state: AuditState } {
  if (!Number.isInteger(threshold) || threshold < 1) throw new RangeError(`threshold ${threshold} is not >= 1`);
  const allowed: boolean[] = [];
  for (const members of candidates) {
    const next = decide(state, members, threshold);
    allowed.push(next !== null);
    if (next !== null) state = next;
  }
  return { allowed, state };
}

// ---------------------------------------------------------------------------------------------------------------
// Deciding one candidate

interface Resolved {
  /** Distinct indexes of known responses. */
  known: number[];
  /** Distinct keys not in the universe yet (they belong to atom 0: no released group has them). */
  unknown: string[];
}

function resolve(state: AuditState, members: readonly string[]): Resolved {
  const seen = new Uint8Array(state.n);
  const known: number[] = [];
  const unknown: string[] = [];
  let fresh: Set<string> | null = null;
  for (const key of members) {
    const i = state.index.get(key);
    if (i !== undefined && i < state.n) {
      if (seen[i] === 0) {
        seen[i] = 1;
        known.push(i);
      }
    } else {
      fresh ??= new Set();
      if (!fresh.has(key)) {
        fresh.add(key);
        unknown.push(key);
      }
    }
  }
  return { known, unknown };
}

/** The released group equal to `known` (all of the candidate's responses are known), if any. */
function findEqual(state: AuditState, known: readonly number[]): boolean {
  const ids = state.byHash.get(hashOf(known));
  if (ids === undefined) return false;
  return ids.some((id) => {
    const group = state.groups[id]!;
    return group.size === known.length && known.every((i) => hasBit(group.bits, state.atomOf[i]!));
  });
}

/** Returns the state with the candidate released, or null when it is refused. */
function decide(state: AuditState, members: readonly string[], threshold: number): AuditState | null {
  const { known, unknown } = resolve(state, members);
  const size = known.length + unknown.length;
  if (size === 0) return state;
  if (unknown.length === 0 && findEqual(state, known)) return state;
  if (size < threshold) return null;

  // Responses of the candidate per atom; atom 0 also takes the unknown keys.
  const m = state.atomSize.length;
  const inC = new Int32Array(m);
  const touched: number[] = [];
  const bump = (atom: number, by: number) => {
    if (inC[atom] === 0) touched.push(atom);
    inC[atom]! += by;
  };
  for (const i of known) bump(state.atomOf[i]!, 1);
  if (unknown.length > 0) bump(0, unknown.length);
  touched.sort((a, b) => a - b);

  if (nestedTooClose(state, inC, touched, size, threshold)) return null;

  // Split every atom the candidate covers only in part; atom 0 always gives its covered part a new atom, since
  // responses to come land in it.
  const newId = new Map<number, number>();
  /** The new atom of each split atom, 0 for none (new atoms are never 0). */
  const splitTo = new Int32Array(m);
  let nextAtom = m;
  for (const atom of touched) {
    if (atom === 0 || inC[atom]! < state.atomSize[atom]!) {
      splitTo[atom] = nextAtom;
      newId.set(atom, nextAtom++);
    }
  }
  const cAtoms = touched.map((atom) => newId.get(atom) ?? atom);
  const atomSize = new Int32Array(nextAtom);
  atomSize.set(state.atomSize);
  for (const [atom, id] of newId) {
    atomSize[atom]! -= atom === 0 ? inC[atom]! - unknown.length : inC[atom]!;
    atomSize[id] = inC[atom]!;
  }
  const groups = newId.size === 0 ? state.groups : state.groups.map((group) => splitGroup(group, newId, nextAtom));
  const rows = newId.size === 0 ? state.rows : state.rows.map((row) => splitRow(row, splitTo));

  // Reduce the candidate's row; it is 0/1 over its atoms, so its coefficient on each row is its entry at the pivot.
  const acc = new Float64Array(nextAtom);
  const mix = new Float64Array(state.kept.length + 1);
  for (const atom of cAtoms) acc[atom] = 1;
  for (const row of rows) {
    const coef = acc[row.pivot]!;
    if (coef !== 0) axpy(acc, mix, row, coef);
  }
  const reduced = gather(acc, mix);

  const groupId = state.groups.length;
  const newGroup: Group = { size, hash: '', bits: bitsOf(cAtoms, nextAtom) };

  if (reduced.pivot < 0) {
    // Zero mod P: released only once proved a rational combination of the kept groups (no atom split here).
    if (newId.size !== 0) return null;
    if (!provedCombination(state, mix, cAtoms)) return null;
    return commit(state, known, unknown, newGroup, { groups, rows, kept: state.kept, atomSize, newId, inC });
  }

  // Independent: normalise, clear its pivot column from the other rows, append it. The pivot is the column the
  // fewest rows hold, so that as few rows as possible change (and fill in).
  const keptIndex = state.kept.length;
  const withMix = setCol({ ...reduced, pivot: sparsestColumn(reduced, rows, nextAtom) }, -(keptIndex + 1), 1);
  const inv = inverse(valueAt(withMix, withMix.pivot));
  const newRow = scale(withMix, inv);
  const nextRows: Row[] = rows.map((row) => {
    const v = valueAt(row, newRow.pivot);
    return v === 0 ? row : combine(row, newRow, P - v);
  });
  nextRows.push(newRow);

  // Only rows this candidate changed can have become a small determined atom (an unchanged row was checked when it
  // was made, against the threshold of its time).
  for (const [i, row] of nextRows.entries()) {
    if (row !== state.rows[i] && atomEntries(row) === 1 && atomSize[row.pivot]! < threshold) return null;
  }
  return commit(state, known, unknown, newGroup, {
    groups,
    rows: nextRows,
    kept: [...state.kept, groupId],
    atomSize,
    newId,
    inC,
  });
}

/** Rule 2: a released group inside the candidate, or around it, 1 to threshold − 1 responses away. */
function nestedTooClose(
  state: AuditState,
  inC: Int32Array,
  touched: readonly number[],
  size: number,
  threshold: number,
): boolean {
  const mask = bitsOf(touched, state.atomSize.length);
  for (const group of state.groups) {
    let inter = 0;
    const words = Math.min(group.bits.length, mask.length);
    for (let w = 0; w < words; w++) {
      let word = group.bits[w]! & mask[w]!;
      while (word !== 0) {
        const low = word & -word;
        inter += inC[w * 32 + 31 - Math.clz32(low)]!;
        word ^= low;
      }
    }
    const close = (difference: number) => difference >= 1 && difference < threshold;
    if (inter === group.size && close(size - inter)) return true;
    if (inter === size && close(group.size - inter)) return true;
  }
  return false;
}

/**
 * Whether the candidate (0/1 over `cAtoms`) equals Σ y_k · group(kept[k]) exactly, with y ≡ −mix (mod P) as the
 * reduction left it. The fractions are reconstructed from their residues and the identity checked in integers.
 */
function provedCombination(state: AuditState, mix: Float64Array, cAtoms: readonly number[]): boolean {
  const fractions: { k: number; num: number; den: number }[] = [];
  let lcm = 1;
  for (let k = 0; k < state.kept.length; k++) {
    const y = (P - mix[k]!) % P;
    if (y === 0) continue;
    const fraction = reconstruct(y);
    if (fraction === null) return false;
    lcm = (lcm / gcd(lcm, fraction.den)) * fraction.den;
    if (lcm > 2 ** 20) return false;
    fractions.push({ k, ...fraction });
  }
  const m = state.atomSize.length;
  const sum = new Float64Array(m);
  let bound = lcm;
  for (const { k, num, den } of fractions) {
    const coef = (num * lcm) / den;
    bound += Math.abs(coef);
    const bits = state.groups[state.kept[k]!]!.bits;
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w]!;
      while (word !== 0) {
        const low = word & -word;
        sum[w * 32 + 31 - Math.clz32(low)]! += coef;
        word ^= low;
      }
    }
  }
  if (bound >= Number.MAX_SAFE_INTEGER) return false;
  for (const atom of cAtoms) sum[atom]! -= lcm;
  return sum.every((v) => v === 0);
}

interface Changes {
  groups: readonly Group[];
  rows: readonly Row[];
  kept: readonly number[];
  atomSize: Int32Array;
  newId: ReadonlyMap<number, number>;
  inC: Int32Array;
}

/** The state with the candidate released: new responses join the universe, split atoms take their members. */
function commit(
  state: AuditState,
  known: readonly number[],
  unknown: readonly string[],
  group: Group,
  changes: Changes,
): AuditState {
  let { keys, index } = state;
  if (unknown.length > 0 && keys.length !== state.n) {
    keys = keys.slice(0, state.n);
    index = new Map(keys.map((key, i) => [key, i]));
  }
  const n = state.n + unknown.length;
  let atomOf = state.atomOf;
  if (unknown.length > 0 || changes.newId.size > 0) {
    atomOf = new Int32Array(n);
    atomOf.set(state.atomOf.subarray(0, state.n));
    for (const i of known) atomOf[i] = changes.newId.get(atomOf[i]!) ?? atomOf[i]!;
    const fresh = changes.newId.get(0) ?? 0;
    for (let j = 0; j < unknown.length; j++) {
      atomOf[state.n + j] = fresh;
      keys.push(unknown[j]!);
      index.set(unknown[j]!, state.n + j);
    }
  }
  const indexes = unknown.length === 0 ? known : [...known, ...unknown.map((_, j) => state.n + j)];
  const released: Group = { ...group, hash: hashOf(indexes) };
  const id = changes.groups.length;
  const byHash = new Map(state.byHash);
  byHash.set(released.hash, [...(byHash.get(released.hash) ?? []), id]);
  return {
    n,
    keys,
    index,
    atomOf,
    atomSize: changes.atomSize,
    groups: [...changes.groups, released],
    byHash,
    kept: changes.kept,
    rows: changes.rows,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Atoms and groups

function hasBit(bits: Uint32Array, i: number): boolean {
  const w = i >>> 5;
  return w < bits.length && (bits[w]! & (1 << (i & 31))) !== 0;
}

function bitsOf(atoms: readonly number[], m: number): Uint32Array {
  const bits = new Uint32Array((m + 31) >>> 5);
  for (const a of atoms) bits[a >>> 5]! |= 1 << (a & 31);
  return bits;
}

/** A group holding a split atom holds both of its parts. */
function splitGroup(group: Group, newId: ReadonlyMap<number, number>, m: number): Group {
  let bits: Uint32Array | null = null;
  for (const [atom, id] of newId) {
    if (!hasBit(group.bits, atom)) continue;
    if (bits === null) {
      bits = new Uint32Array((m + 31) >>> 5);
      bits.set(group.bits);
    }
    bits[id >>> 5]! |= 1 << (id & 31);
  }
  return bits === null ? group : { ...group, bits };
}

/** Both parts of a split atom have the old atom's column; the new ids are the largest, so they go last. */
function splitRow(row: Row, splitTo: Int32Array): Row {
  const extraCols: number[] = [];
  const extraVals: number[] = [];
  for (let j = 0; j < row.cols.length; j++) {
    const col = row.cols[j]!;
    const id = col >= 0 ? splitTo[col]! : 0;
    if (id !== 0) {
      extraCols.push(id);
      extraVals.push(row.vals[j]!);
    }
  }
  if (extraCols.length === 0) return row;
  const order = extraCols.map((_, j) => j).sort((a, b) => extraCols[a]! - extraCols[b]!);
  const cols = new Int32Array(row.cols.length + extraCols.length);
  const vals = new Int32Array(cols.length);
  cols.set(row.cols);
  vals.set(row.vals);
  order.forEach((j, k) => {
    cols[row.cols.length + k] = extraCols[j]!;
    vals[row.cols.length + k] = extraVals[j]!;
  });
  return { pivot: row.pivot, cols, vals };
}

/** Sum of a mixing of each index, in two 32-bit lanes, with the count: equal sets hash equal in any order. */
function hashOf(indexes: readonly number[]): string {
  let a = 0;
  let b = 0;
  for (const i of indexes) {
    a = (a + mix32(i ^ 0x9e3779b9)) >>> 0;
    b = (b + mix32(i + 0x7f4a7c15)) >>> 0;
  }
  return `${indexes.length}.${a.toString(36)}.${b.toString(36)}`;
}

function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Sparse rows mod P

/** acc −= coef · row, over the atom columns (`acc`) and the kept-group columns (`mix`). */
function axpy(acc: Float64Array, mix: Float64Array, row: Row, coef: number): void {
  for (let j = 0; j < row.cols.length; j++) {
    const col = row.cols[j]!;
    const delta = (coef * row.vals[j]!) % P;
    if (col >= 0) acc[col] = (acc[col]! + P - delta) % P;
    else mix[-col - 1] = (mix[-col - 1]! + P - delta) % P;
  }
}

/** The non-zero entries as a row; pivot −1 when no atom column is non-zero. */
function gather(acc: Float64Array, mix: Float64Array): Row {
  const cols: number[] = [];
  const vals: number[] = [];
  for (let k = mix.length - 1; k >= 0; k--) {
    if (mix[k] !== 0) {
      cols.push(-(k + 1));
      vals.push(mix[k]!);
    }
  }
  let pivot = -1;
  for (let a = 0; a < acc.length; a++) {
    if (acc[a] !== 0) {
      cols.push(a);
      vals.push(acc[a]!);
      pivot = a;
    }
  }
  return { pivot, cols: Int32Array.from(cols), vals: Int32Array.from(vals) };
}

function valueAt(row: Row, col: number): number {
  let lo = 0;
  let hi = row.cols.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = row.cols[mid]!;
    if (c === col) return row.vals[mid]!;
    if (c < col) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

function setCol(row: Row, col: number, value: number): Row {
  return combine(row, { pivot: row.pivot, cols: Int32Array.of(col), vals: Int32Array.of(value) }, 1);
}

function scale(row: Row, factor: number): Row {
  return { pivot: row.pivot, cols: row.cols, vals: row.vals.map((v) => (v * factor) % P) };
}

/** row + coef · other, merged by column, zeros dropped; keeps `row`'s pivot. */
function combine(row: Row, other: Row, coef: number): Row {
  const [ac, av, bc, bv] = [row.cols, row.vals, other.cols, other.vals];
  const cols = new Int32Array(ac.length + bc.length);
  const vals = new Int32Array(cols.length);
  let [i, j, k] = [0, 0, 0];
  while (i < ac.length || j < bc.length) {
    const a = i < ac.length ? ac[i]! : Infinity;
    const b = j < bc.length ? bc[j]! : Infinity;
    let v: number;
    let col: number;
    if (a < b) {
      col = a;
      v = av[i++]!;
    } else if (b < a) {
      col = b;
      v = (coef * bv[j++]!) % P;
    } else {
      col = a;
      v = (av[i++]! + ((coef * bv[j++]!) % P)) % P;
    }
    if (v !== 0) {
      cols[k] = col;
      vals[k++] = v;
    }
  }
  return { pivot: row.pivot, cols: cols.slice(0, k), vals: vals.slice(0, k) };
}

/** Of the atom columns non-zero in `reduced`, the one held by the fewest rows (the largest id on a tie). */
function sparsestColumn(reduced: Row, rows: readonly Row[], m: number): number {
  const count = new Int32Array(m).fill(-1);
  for (let j = 0; j < reduced.cols.length; j++) if (reduced.cols[j]! >= 0) count[reduced.cols[j]!] = 0;
  for (const row of rows) {
    for (let j = row.cols.length - 1; j >= 0; j--) {
      const col = row.cols[j]!;
      if (col < 0) break;
      if (count[col]! >= 0) count[col]!++;
    }
  }
  let best = reduced.pivot;
  for (let j = 0; j < reduced.cols.length; j++) {
    const col = reduced.cols[j]!;
    if (col >= 0 && count[col]! <= count[best]!) best = col;
  }
  return best;
}

function atomEntries(row: Row): number {
  let count = 0;
  for (let j = row.cols.length - 1; j >= 0 && row.cols[j]! >= 0; j--) count++;
  return count;
}

function inverse(a: number): number {
  let [r0, r1, s0, s1] = [P, a, 0, 1];
  while (r1 !== 0) {
    const q = Math.floor(r0 / r1);
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return ((s0 % P) + P) % P;
}

/** The fraction num/den ≡ y (mod P) with |num|, den ≤ √(P/2), when there is one (then it is unique). */
function reconstruct(y: number): { num: number; den: number } | null {
  let [r0, r1, t0, t1] = [P, y, 0, 1];
  while (r1 > RECONSTRUCT) {
    const q = Math.floor(r0 / r1);
    [r0, r1] = [r1, r0 - q * r1];
    [t0, t1] = [t1, t0 - q * t1];
  }
  if (t1 === 0 || Math.abs(t1) > RECONSTRUCT) return null;
  const sign = t1 < 0 ? -1 : 1;
  const num = sign * r1;
  const den = sign * t1;
  if (gcd(Math.abs(num), den) !== 1) return null;
  return { num, den };
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

// ---------------------------------------------------------------------------------------------------------------
// Storage

interface Stored {
  format: number;
  keys: string[];
  atomOf: string;
  atomSize: string;
  groups: { size: number; hash: string; bits: string }[];
  kept: number[];
  /** Each row's columns (as gaps) and values (as the signed residue nearest 0), zigzag varints in base64. */
  rows: { pivot: number; entries: string }[];
}

/** JSON for PostgreSQL; the numeric arrays are little-endian typed arrays in base64 (a tenth of JSON numbers). */
export function serialise(state: AuditState): string {
  const stored: Stored = {
    format: FORMAT,
    keys: state.keys.slice(0, state.n),
    atomOf: toBase64(state.atomOf.subarray(0, state.n)),
    atomSize: toBase64(state.atomSize),
    groups: state.groups.map((g) => ({ size: g.size, hash: g.hash, bits: toBase64(g.bits) })),
    kept: [...state.kept],
    rows: state.rows.map((r) => ({ pivot: r.pivot, entries: encodeRow(r) })),
  };
  return JSON.stringify(stored);
}

export function deserialise(text: string): AuditState {
  const stored = JSON.parse(text) as Stored;
  if (stored?.format !== FORMAT) throw new Error(`release audit: unknown state format ${String(stored?.format)}`);
  const keys = stored.keys;
  const groups: Group[] = stored.groups.map((g) => ({
    size: g.size,
    hash: g.hash,
    bits: new Uint32Array(fromBase64(g.bits)),
  }));
  const byHash = new Map<string, number[]>();
  groups.forEach((g, id) => byHash.set(g.hash, [...(byHash.get(g.hash) ?? []), id]));
  const atomOf = new Int32Array(fromBase64(stored.atomOf));
  if (atomOf.length !== keys.length) throw new Error('release audit: state is inconsistent');
  return {
    n: keys.length,
    keys,
    index: new Map(keys.map((key, i) => [key, i])),
    atomOf,
    atomSize: new Int32Array(fromBase64(stored.atomSize)),
    groups,
    byHash,
    kept: stored.kept,
    rows: stored.rows.map((r) => decodeRow(r.pivot, r.entries)),
  };
}

/** Rows are most of the state, and their gaps and values are mostly small (±1): a varint takes one byte each. */
function encodeRow(row: Row): string {
  const bytes = new Uint8Array(row.cols.length * 10);
  let at = 0;
  const put = (value: number) => {
    let z = value < 0 ? -2 * value - 1 : 2 * value;
    while (z >= 0x80) {
      bytes[at++] = (z % 0x80) | 0x80;
      z = Math.floor(z / 0x80);
    }
    bytes[at++] = z;
  };
  let previous = 0;
  for (let j = 0; j < row.cols.length; j++) {
    put(row.cols[j]! - previous);
    previous = row.cols[j]!;
    const v = row.vals[j]!;
    put(v > P / 2 ? v - P : v);
  }
  return Buffer.from(bytes.buffer, 0, at).toString('base64');
}

function decodeRow(pivot: number, text: string): Row {
  const bytes = Buffer.from(text, 'base64');
  let at = 0;
  const next = () => {
    let z = 0;
    let scale = 1;
    let byte: number;
    do {
      byte = bytes[at++]!;
      z += (byte & 0x7f) * scale;
      scale *= 0x80;
    } while (byte >= 0x80);
    return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  };
  // Each entry takes at least two bytes.
  const cols = new Int32Array(bytes.length >>> 1);
  const vals = new Int32Array(cols.length);
  let [k, previous] = [0, 0];
  while (at < bytes.length) {
    previous += next();
    cols[k] = previous;
    const v = next();
    vals[k++] = v < 0 ? v + P : v;
  }
  return { pivot, cols: cols.slice(0, k), vals: vals.slice(0, k) };
}

function toBase64(array: Int32Array | Uint32Array): string {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString('base64');
}

/** A fresh, aligned buffer (a Buffer from base64 may share an unaligned pool). */
function fromBase64(text: string): ArrayBuffer {
  const bytes = Buffer.from(text, 'base64');
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  return copy;
}
