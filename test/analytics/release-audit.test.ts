import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  audit,
  deserialise,
  emptyAudit,
  serialise,
  type AuditState,
} from '../../server/src/modules/analytics/release-audit.js';
import { checkReleased } from './released-solver.js';

const keys = (from: number, to: number, prefix = 'r') =>
  Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);

/** Releases the groups one call at a time, as requests would, and returns each decision. */
function releaseInTurn(groups: readonly (readonly string[])[], threshold = 5) {
  let state = emptyAudit();
  const allowed: boolean[] = [];
  for (const group of groups) {
    const decided = audit(state, [group], threshold);
    allowed.push(decided.allowed[0]!);
    state = decided.state;
  }
  return { allowed, state };
}

describe('the attacks on separately allowed results', () => {
  it('a department and the VP organization inside it, one person apart: the second is refused', () => {
    const engineering = keys(0, 21);
    const vpOrganization = keys(1, 21);
    expect(releaseInTurn([engineering, vpOrganization]).allowed).toEqual([true, false]);
    expect(releaseInTurn([vpOrganization, engineering]).allowed).toEqual([true, false]);
  });

  it('a window of 30 and the whole of 31: the whole is refused', () => {
    expect(releaseInTurn([keys(0, 30), keys(0, 31)]).allowed).toEqual([true, false]);
  });

  it('polling a live result before and after one more response: the second poll is refused, a step of 5 is not', () => {
    expect(releaseInTurn([keys(0, 12), keys(0, 13)]).allowed).toEqual([true, false]);
    expect(releaseInTurn([keys(0, 12), keys(0, 13), keys(0, 17)]).allowed).toEqual([true, false, true]);
  });

  it('a department minus its two filtered parts leaves one person: the last part is refused', () => {
    const berlin = keys(0, 10, 'b');
    const munich = keys(0, 10, 'm');
    const engineering = [...berlin, ...munich, 'vp'];
    expect(releaseInTurn([engineering, berlin, munich]).allowed).toEqual([true, true, false]);
    // The same within one batch: a candidate allowed earlier in the batch counts as released.
    expect(audit(emptyAudit(), [engineering, berlin, munich], 5).allowed).toEqual([true, true, false]);
  });
});

describe('what stays allowed', () => {
  it('a whole and every segment of a breakdown, the last one being the whole minus the others', () => {
    const segments = [keys(0, 7), keys(7, 15), keys(15, 20), keys(20, 31)];
    const { allowed } = releaseInTurn([keys(0, 31), ...segments, keys(0, 15)]);
    expect(allowed).toEqual([true, true, true, true, true, true]);
  });

  it('a crossed breakdown (department by location) whose cells are all large', () => {
    // 2 × 2 cells of 6 people: rows, columns and the whole determine no cell alone beyond what it holds.
    const cell = (d: number, l: number) => keys(0, 6, `d${d}l${l}-`);
    const department = (d: number) => [...cell(d, 0), ...cell(d, 1)];
    const location = (l: number) => [...cell(0, l), ...cell(1, l)];
    const whole = [...department(0), ...department(1)];
    const { allowed } = releaseInTurn([whole, department(0), department(1), location(0), location(1), cell(0, 0)]);
    expect(allowed).toEqual([true, true, true, true, true, true]);
  });

  it('refuses a small set of people revealed together by subtraction, and a group below the threshold', () => {
    // 21 = 10 + 8 + 3: no pair is close, but the department minus both parts is 3 people together.
    const [berlin, munich] = [keys(0, 10, 'b'), keys(0, 8, 'm')];
    const engineering = [...berlin, ...munich, ...keys(0, 3, 'x')];
    expect(releaseInTurn([engineering, berlin, munich]).allowed).toEqual([true, true, false]);
    expect(releaseInTurn([keys(0, 4)]).allowed).toEqual([false]);
  });

  it('an empty group and a re-release in another order, with repeats, are allowed and change nothing', () => {
    const first = audit(emptyAudit(), [keys(0, 20)], 5).state;
    const again = audit(first, [[], [...keys(0, 20)].reverse().concat(['r3', 'r3'])], 5);
    expect(again.allowed).toEqual([true, true]);
    expect(serialise(again.state)).toBe(serialise(first));
  });

  it('a refused candidate changes nothing, and the state given is never changed', () => {
    const before = audit(emptyAudit(), [keys(0, 21)], 5).state;
    const text = serialise(before);
    const decided = audit(before, [keys(0, 21).concat(['new-key']), keys(1, 21)], 5);
    expect(decided.allowed).toEqual([false, false]);
    expect(serialise(decided.state)).toBe(text);
    audit(before, [keys(0, 10), keys(5, 40)], 5);
    expect(serialise(before)).toBe(text);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The campaign: sequences of groups as analytics would release them.

type Op =
  | { kind: 'subset'; bits: boolean[] }
  | { kind: 'window'; end: number }
  | { kind: 'poll'; end: number }
  | { kind: 'segment'; attribute: number; value: number }
  | { kind: 'filter'; a: number; va: number; b: number; vb: number }
  | { kind: 'parts'; a: number; va: number; b: number; skip: number }
  | { kind: 'union' | 'intersection' | 'difference'; x: number; y: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('subset' as const), bits: fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }) }),
  fc.record({ kind: fc.constant('window' as const), end: fc.nat(60) }),
  fc.record({ kind: fc.constant('poll' as const), end: fc.nat(60) }),
  fc.record({ kind: fc.constant('segment' as const), attribute: fc.nat(2), value: fc.nat(3) }),
  fc.record({ kind: fc.constant('filter' as const), a: fc.nat(2), va: fc.nat(3), b: fc.nat(2), vb: fc.nat(3) }),
  fc.record({ kind: fc.constant('parts' as const), a: fc.nat(2), va: fc.nat(3), b: fc.nat(2), skip: fc.nat(3) }),
  fc.record({
    kind: fc.constantFrom('union' as const, 'intersection' as const, 'difference' as const),
    x: fc.nat(),
    y: fc.nat(),
  }),
);

const scenarioArb = fc.integer({ min: 20, max: 60 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    threshold: fc.integer({ min: 3, max: 5 }),
    // Three attributes per response (department, location, level), with 2 to 4 values each.
    attributes: fc.array(fc.tuple(fc.nat(1), fc.nat(3), fc.nat(2)), { minLength: n, maxLength: n }),
    ops: fc.array(opArb, { minLength: 1, maxLength: 24 }),
    batches: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 24, maxLength: 24 }),
  }),
);

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

/** The candidate groups of a scenario, as index sets, in order (a poll gives two). */
function candidatesOf({ n, attributes, ops }: Scenario): Set<number>[] {
  const all = Array.from({ length: n }, (_, j) => j);
  const out: Set<number>[] = [];
  const pick = (i: number) => out[i % Math.max(out.length, 1)] ?? new Set<number>();
  for (const op of ops) {
    switch (op.kind) {
      case 'subset':
        out.push(new Set(all.filter((j) => op.bits[j])));
        break;
      case 'window':
        out.push(new Set(all.slice(0, op.end % (n + 1))));
        break;
      case 'poll': {
        const end = op.end % n;
        out.push(new Set(all.slice(0, end)), new Set(all.slice(0, end + 1)));
        break;
      }
      case 'segment':
        out.push(new Set(all.filter((j) => attributes[j]![op.attribute] === op.value)));
        break;
      case 'filter':
        out.push(new Set(all.filter((j) => attributes[j]![op.a] === op.va && attributes[j]![op.b] === op.vb)));
        break;
      case 'parts':
        // A segment, then its parts by another attribute but one: the segment minus them is the part skipped.
        out.push(new Set(all.filter((j) => attributes[j]![op.a] === op.va)));
        for (let v = 0; v < 4; v++) {
          if (v === op.skip) continue;
          out.push(new Set(all.filter((j) => attributes[j]![op.a] === op.va && attributes[j]![op.b] === v)));
        }
        break;
      default: {
        const [x, y] = [pick(op.x), pick(op.y)];
        if (op.kind === 'union') out.push(new Set([...x, ...y]));
        else if (op.kind === 'intersection') out.push(new Set([...x].filter((j) => y.has(j))));
        else out.push(new Set([...x].filter((j) => !y.has(j))));
      }
    }
  }
  return out;
}

/** Runs a scenario's candidates through the audit in batches; returns the final state and the allowed groups. */
function run(scenario: Scenario) {
  const candidates = candidatesOf(scenario);
  let state = emptyAudit();
  const released: Set<number>[] = [];
  let at = 0;
  for (const size of scenario.batches) {
    const batch = candidates.slice(at, at + size);
    if (batch.length === 0) break;
    at += size;
    const decided = audit(
      state,
      batch.map((group) => [...group].map((j) => `r${j}`)),
      scenario.threshold,
    );
    state = decided.state;
    batch.forEach((group, i) => {
      if (decided.allowed[i]) released.push(group);
    });
  }
  return { state, released, candidates };
}

describe('the audit against an independent solver', () => {
  it('never lets the released groups determine a response, a small set, or a close nested pair', () => {
    let allowedTotal = 0;
    let candidateTotal = 0;
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { released, candidates } = run(scenario);
        allowedTotal += released.length;
        candidateTotal += candidates.length;
        checkReleased(released, scenario.n, scenario.threshold);
      }),
      { numRuns: 300 },
    );
    // Not a vacuous campaign: a fair share of groups is released.
    expect(allowedTotal).toBeGreaterThan(candidateTotal / 5);
  });

  it('always allows an identical re-release, in any order, and it changes nothing', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (scenario, seed) => {
        const { state, released, candidates } = run(scenario);
        const before = serialise(state);
        // Every released group in another order; candidates (refused or not) in between change no decision.
        const again = released.map((group, i) => {
          const members = [...group].map((j) => `r${j}`);
          return i % 2 === 0 ? members.reverse() : [...members.slice(seed % (members.length + 1)), ...members];
        });
        const decided = audit(state, again, scenario.threshold);
        expect(decided.allowed.every(Boolean)).toBe(true);
        expect(serialise(decided.state)).toBe(before);
        const mixed = audit(
          state,
          candidates.flatMap((c, i) => [[...c].map((j) => `r${j}`), again[i % Math.max(again.length, 1)] ?? []]),
          scenario.threshold,
        );
        mixed.allowed.forEach((ok, i) => {
          if (i % 2 === 1) expect(ok).toBe(true);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('round-trips through serialise/deserialise and decides the same afterwards', () => {
    fc.assert(
      fc.property(scenarioArb, scenarioArb, (first, then) => {
        const { state } = run(first);
        const text = serialise(state);
        const restored: AuditState = deserialise(text);
        expect(serialise(restored)).toBe(text);
        const next = candidatesOf({ ...then, n: first.n, attributes: first.attributes }).map((g) =>
          [...g].map((j) => `r${j}`),
        );
        const a = audit(state, next, first.threshold);
        const b = audit(restored, next, first.threshold);
        expect(b.allowed).toEqual(a.allowed);
        expect(serialise(b.state)).toBe(serialise(a.state));
      }),
      { numRuns: 100 },
    );
  });

  it('rejects a state it does not know how to read', () => {
    expect(() => deserialise('{"format":99}')).toThrow(/format/);
  });
});
