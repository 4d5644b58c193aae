/**
 * Johnson's relative weights against a published worked example (the `rwa` R package's vignette: mtcars,
 * mpg on cyl, disp, hp and gear) and against an independent least-squares R² on generated data.
 */
import * as ss from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import { relativeWeights, symmetricEigen } from '../../server/src/modules/analytics/relative-weights.js';
import { focusAreasOf } from '../../server/src/modules/analytics/smart.js';
import { random } from './fixtures.js';

// mtcars (R datasets): mpg, cyl, disp, hp, gear for the 32 cars, in the data set's order.
const mtcars = [
  [21.0, 6, 160.0, 110, 4],
  [21.0, 6, 160.0, 110, 4],
  [22.8, 4, 108.0, 93, 4],
  [21.4, 6, 258.0, 110, 3],
  [18.7, 8, 360.0, 175, 3],
  [18.1, 6, 225.0, 105, 3],
  [14.3, 8, 360.0, 245, 3],
  [24.4, 4, 146.7, 62, 4],
  [22.8, 4, 140.8, 95, 4],
  [19.2, 6, 167.6, 123, 4],
  [17.8, 6, 167.6, 123, 4],
  [16.4, 8, 275.8, 180, 3],
  [17.3, 8, 275.8, 180, 3],
  [15.2, 8, 275.8, 180, 3],
  [10.4, 8, 472.0, 205, 3],
  [10.4, 8, 460.0, 215, 3],
  [14.7, 8, 440.0, 230, 3],
  [32.4, 4, 78.7, 66, 4],
  [30.4, 4, 75.7, 52, 4],
  [33.9, 4, 71.1, 65, 4],
  [21.5, 4, 120.1, 97, 3],
  [15.5, 8, 318.0, 150, 3],
  [15.2, 8, 304.0, 150, 3],
  [13.3, 8, 350.0, 245, 3],
  [19.2, 8, 400.0, 175, 3],
  [27.3, 4, 79.0, 66, 4],
  [26.0, 4, 120.3, 91, 5],
  [30.4, 4, 95.1, 113, 5],
  [15.8, 8, 351.0, 264, 5],
  [19.7, 6, 145.0, 175, 5],
  [15.0, 8, 301.0, 335, 5],
  [21.4, 4, 121.0, 109, 4],
];

function correlationMatrix(columns: number[][]): number[][] {
  return columns.map((a) => columns.map((b) => (a === b ? 1 : ss.sampleCorrelation(a, b))));
}

/** R² of the least-squares fit with intercept, by the normal equations (Gaussian elimination). */
function leastSquaresRSquared(y: number[], xs: number[][]): number {
  const rows = y.map((_, i) => [1, ...xs.map((x) => x[i]!)]);
  const p = rows[0]!.length;
  const a = Array.from({ length: p }, (_, i) => [
    ...Array.from({ length: p }, (_, j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)),
    rows.reduce((s, r, k) => s + r[i]! * y[k]!, 0),
  ]);
  for (let c = 0; c < p; c++) {
    let pivot = c;
    for (let r = c + 1; r < p; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[pivot]![c]!)) pivot = r;
    [a[c], a[pivot]] = [a[pivot]!, a[c]!];
    for (let r = 0; r < p; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= p; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  const beta = a.map((row, i) => row[p]! / row[i]!);
  const fitted = rows.map((r) => r.reduce((s, v, j) => s + v * beta[j]!, 0));
  const mean = ss.mean(y);
  return 1 - y.reduce((s, v, i) => s + (v - fitted[i]!) ** 2, 0) / y.reduce((s, v) => s + (v - mean) ** 2, 0);
}

describe('relative weights', () => {
  it('match the published mtcars example of the rwa package', () => {
    const columns = [0, 1, 2, 3, 4].map((c) => mtcars.map((row) => row[c]!));
    const r = correlationMatrix(columns);
    const result = relativeWeights(
      r.slice(1).map((row) => row.slice(1)),
      r[0]!.slice(1),
    )!;
    // rwa(mtcars, outcome = "mpg", predictors = c("cyl", "disp", "hp", "gear")): raw relative weights and R².
    expect(result.rSquared).toBeCloseTo(0.7791896, 6);
    const [cyl, disp, hp, gear] = result.weights;
    expect(cyl).toBeCloseTo(0.2284797, 6);
    expect(disp).toBeCloseTo(0.2221469, 6);
    expect(hp).toBeCloseTo(0.2321744, 6);
    expect(gear).toBeCloseTo(0.0963886, 6);
  });

  it('add up to the R² of the least-squares fit on generated data', () => {
    const rand = random(3);
    for (let trial = 0; trial < 20; trial++) {
      const n = 60 + trial * 5;
      const drivers = 2 + (trial % 5);
      const xs = Array.from({ length: drivers }, () => Array.from({ length: n }, () => Math.round(rand() * 4) + 1));
      // Correlated drivers: each leans on the previous one.
      for (let d = 1; d < drivers; d++) xs[d] = xs[d]!.map((v, i) => v + Math.round(xs[d - 1]![i]! * rand()));
      const y = Array.from({ length: n }, (_, i) => xs.reduce((s, x, d) => s + x[i]! * (d + 1) * 0.3, 0) + rand() * 3);
      const r = correlationMatrix([y, ...xs]);
      const result = relativeWeights(
        r.slice(1).map((row) => row.slice(1)),
        r[0]!.slice(1),
      )!;
      const expected = leastSquaresRSquared(y, xs);
      expect(result.rSquared).toBeCloseTo(expected, 9);
      expect(result.weights.reduce((s, w) => s + w, 0)).toBeCloseTo(expected, 9);
      expect(result.weights.every((w) => w >= 0)).toBe(true);
    }
  });

  it('equal the squared correlations when drivers are uncorrelated, and refuse a singular matrix', () => {
    const identity = [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ];
    const result = relativeWeights(identity, [0.5, 0.3, -0.2])!;
    expect(result.weights.map((w) => Number(w.toFixed(12)))).toEqual([0.25, 0.09, 0.04]);
    expect(
      relativeWeights(
        [
          [1, 1],
          [1, 1],
        ],
        [0.5, 0.5],
      ),
    ).toBeUndefined();
  });

  it('finds eigenpairs that rebuild the matrix', () => {
    const m = [
      [4, 1, 2],
      [1, 3, 0.5],
      [2, 0.5, 5],
    ];
    const { values, vectors } = symmetricEigen(m);
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        const rebuilt = values.reduce((s, l, k) => s + vectors[i]![k]! * l * vectors[j]![k]!, 0);
        expect(rebuilt).toBeCloseTo(m[i]![j]!, 10);
      }
  });

  it('focus areas: high weight, low favourable, at most three', () => {
    const driver = (questionId: string, relativeWeight: number, favourable: number) => ({
      questionId,
      text: questionId,
      relativeWeight,
      importance: 0,
      correlation: 0.5,
      responseCount: 40,
      average: 3,
      favourable,
    });
    const drivers = [driver('a', 0.2, 40), driver('b', 0.15, 80), driver('c', 0.05, 20), driver('d', 0.1, 50)];
    // R² 0.5 over 4 drivers: mean weight 0.125; mean favourable 47.5.
    expect(focusAreasOf(drivers, 0.5).map((f) => f.questionId)).toEqual(['a']);
    expect(focusAreasOf([], null)).toEqual([]);
  });
});
