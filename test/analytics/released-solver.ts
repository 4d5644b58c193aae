/**
 * An independent solver for the audit of released results: exact integer (BigInt) Gauss-Jordan elimination over the
 * raw responses, no atoms, no modular arithmetic. Each row keeps a positive pivot and zeros in the other rows' pivot
 * columns. `checkReleased` asserts what the audit promises about a family of released groups.
 */
import { expect } from 'vitest';

class RowSpace {
  private rows: { pivot: number; values: bigint[] }[] = [];
  constructor(private readonly width: number) {}

  /** The part of `v` outside the row space (all zeros when `v` is in it). */
  reduce(v: readonly bigint[]): bigint[] {
    let out = [...v];
    for (const { pivot, values } of this.rows) {
      const c = out[pivot]!;
      if (c === 0n) continue;
      const d = values[pivot]!;
      out = normalise(out.map((x, j) => x * d - c * values[j]!));
    }
    return out;
  }

  add(v: readonly bigint[]): void {
    const r = this.reduce(v);
    const pivot = r.findIndex((x) => x !== 0n);
    if (pivot < 0) return;
    const row = normalise(r[pivot]! < 0n ? r.map((x) => -x) : r);
    this.rows = this.rows.map(({ pivot: p, values }) => {
      const c = values[pivot]!;
      if (c === 0n) return { pivot: p, values };
      const d = row[pivot]!;
      return { pivot: p, values: normalise(values.map((x, j) => x * d - c * row[j]!)) };
    });
    this.rows.push({ pivot, values: row });
  }

  contains(v: readonly bigint[]): boolean {
    return this.reduce(v).every((x) => x === 0n);
  }

  unit(j: number): bigint[] {
    return Array.from({ length: this.width }, (_, i) => (i === j ? 1n : 0n));
  }
}

function normalise(v: bigint[]): bigint[] {
  let g = 0n;
  for (const x of v) {
    let a = x < 0n ? -x : x;
    let b = g;
    while (b !== 0n) [a, b] = [b, a % b];
    g = a;
  }
  return g <= 1n ? v : v.map((x) => x / g);
}

/** Checks the released groups (as response indexes over 0..n): what the audit promises. */
export function checkReleased(released: readonly Set<number>[], n: number, threshold: number): void {
  const space = new RowSpace(n);
  for (const group of released) space.add(Array.from({ length: n }, (_, j) => (group.has(j) ? 1n : 0n)));
  // No response determined by any combination.
  for (let j = 0; j < n; j++) expect(space.contains(space.unit(j)), `response ${j} determined`).toBe(false);
  // No released group inside another, 1 to threshold − 1 responses apart.
  for (const a of released) {
    for (const b of released) {
      if (a.size >= b.size || ![...a].every((j) => b.has(j))) continue;
      expect(b.size - a.size, 'nested groups too close').toBeGreaterThanOrEqual(threshold);
    }
  }
  // No set of responses that the groups do not tell apart, 2 to threshold − 1 of them, determined together.
  const classes = new Map<string, number[]>();
  for (let j = 0; j < n; j++) {
    const signature = released.map((g) => (g.has(j) ? '1' : '0')).join('');
    if (signature.includes('1')) classes.set(signature, [...(classes.get(signature) ?? []), j]);
  }
  for (const members of classes.values()) {
    if (members.length < 2 || members.length >= threshold) continue;
    const indicator = Array.from({ length: n }, (_, j) => (members.includes(j) ? 1n : 0n));
    expect(space.contains(indicator), `small set ${members.join(',')} determined`).toBe(false);
  }
}
