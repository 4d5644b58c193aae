/**
 * Johnson's relative weights (Johnson, 2000, "A heuristic method for estimating the relative weight of
 * predictor variables in multiple regression", Multivariate Behavioral Research 35(1)), from correlation
 * matrices only — the database computes them with corr(); no response is loaded here.
 *
 * With Rxx the drivers' correlation matrix and rxy their correlations with the outcome:
 *   Λ = Rxx^½ = V·diag(√λ)·Vᵀ (the orthogonal counterparts' loadings), β = Λ⁻¹·rxy,
 *   weight_j = Σ_k Λ_jk²·β_k², and Σ_j weight_j = Σ_k β_k² = rxyᵀ·Rxx⁻¹·rxy = R².
 */

export interface RelativeWeights {
  rSquared: number;
  weights: number[];
}

/** Eigenvalues and eigenvectors (columns of `vectors`) of a symmetric matrix, by cyclic Jacobi rotations. */
export function symmetricEigen(matrix: readonly (readonly number[])[]): { values: number[]; vectors: number[][] } {
  const n = matrix.length;
  const a = matrix.map((row) => [...row]);
  const v: number[][] = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) off += a[i]![j]! ** 2;
    if (off < 1e-24) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p]![q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q]![q]! - a[p]![p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k]![p]!;
          const akq = a[k]![q]!;
          a[k]![p] = c * akp - s * akq;
          a[k]![q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p]![k]!;
          const aqk = a[q]![k]!;
          a[p]![k] = c * apk - s * aqk;
          a[q]![k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k]![p]!;
          const vkq = v[k]![q]!;
          v[k]![p] = c * vkp - s * vkq;
          v[k]![q] = s * vkp + c * vkq;
        }
      }
    }
  }
  return { values: a.map((row, i) => row[i]!), vectors: v };
}

/** `undefined` when Rxx is singular (a driver is a linear combination of others): no weights exist then. */
export function relativeWeights(
  rxx: readonly (readonly number[])[],
  rxy: readonly number[],
): RelativeWeights | undefined {
  const p = rxy.length;
  const { values, vectors } = symmetricEigen(rxx);
  if (values.some((value) => !(value > 1e-10))) return undefined;
  const root = values.map(Math.sqrt);
  // Λ = V diag(√λ) Vᵀ and Λ⁻¹ = V diag(1/√λ) Vᵀ.
  const lambda = Array.from({ length: p }, (_, i) =>
    Array.from({ length: p }, (_, j) => {
      let sum = 0;
      for (let k = 0; k < p; k++) sum += vectors[i]![k]! * root[k]! * vectors[j]![k]!;
      return sum;
    }),
  );
  const beta = Array.from({ length: p }, (_, i) => {
    let sum = 0;
    for (let j = 0; j < p; j++) {
      let inverse = 0;
      for (let k = 0; k < p; k++) inverse += (vectors[i]![k]! * vectors[j]![k]!) / root[k]!;
      sum += inverse * rxy[j]!;
    }
    return sum;
  });
  const weights = Array.from({ length: p }, (_, j) => {
    let sum = 0;
    for (let k = 0; k < p; k++) sum += lambda[j]![k]! ** 2 * beta[k]! ** 2;
    return sum;
  });
  return { rSquared: beta.reduce((sum, b) => sum + b * b, 0), weights };
}
