/**
 * Eigen-decomposition of a symmetric matrix (cyclic Jacobi rotations) and the whitening built from
 * it: the linear map that spreads a set of vectors evenly over their directions, so that the few
 * directions every text shares stop dominating cosines.
 */

export interface Eigen {
  /** Eigenvalues, in the order of `vectors`' columns. */
  values: number[];
  /** n × n, row-major; column j is the eigenvector of `values[j]`. */
  vectors: Float64Array;
}

/** Eigenvalues and eigenvectors of the symmetric n × n `matrix` (row-major). */
export function symmetricEigen(matrix: Float64Array, n: number, maxSweeps = 15): Eigen {
  const a = new Float64Array(matrix);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i += 1) v[i * n + i] = 1;
  let scale = 0;
  for (let i = 0; i < n * n; i += 1) scale += (a[i] ?? 0) ** 2;
  for (let sweep = 0; sweep < maxSweeps; sweep += 1) {
    let off = 0;
    for (let p = 0; p < n; p += 1) for (let q = p + 1; q < n; q += 1) off += (a[p * n + q] ?? 0) ** 2;
    if (off <= 1e-24 * scale) break;
    for (let p = 0; p < n; p += 1) {
      for (let q = p + 1; q < n; q += 1) {
        const apq = a[p * n + q] ?? 0;
        if (apq === 0) continue;
        const theta = ((a[q * n + q] ?? 0) - (a[p * n + p] ?? 0)) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k += 1) {
          const akp = a[k * n + p] ?? 0;
          const akq = a[k * n + q] ?? 0;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k += 1) {
          const apk = a[p * n + k] ?? 0;
          const aqk = a[q * n + k] ?? 0;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k += 1) {
          const vkp = v[k * n + p] ?? 0;
          const vkq = v[k * n + q] ?? 0;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  return { values: Array.from({ length: n }, (_, i) => a[i * n + i] ?? 0), vectors: v };
}

/**
 * The map x ↦ (x − mean) · U · Λ^(−power) of the `samples` (each of length n): centred, rotated onto
 * their principal directions (U), each scaled by its variance (Λ) to the −`power`. Power ½ is
 * whitening: every direction ends with variance 1; a smaller power evens them out only partly.
 */
export function whiteningOf(
  samples: readonly Float64Array[],
  n: number,
  power = 0.5,
): { mean: Float64Array; transform: Float64Array } {
  const mean = new Float64Array(n);
  for (const x of samples)
    for (let d = 0; d < n; d += 1) mean[d] = (mean[d] ?? 0) + (x[d] ?? 0) / samples.length;
  const covariance = new Float64Array(n * n);
  const centred = new Float64Array(n);
  for (const x of samples) {
    for (let d = 0; d < n; d += 1) centred[d] = (x[d] ?? 0) - (mean[d] ?? 0);
    for (let i = 0; i < n; i += 1) {
      const ci = (centred[i] ?? 0) / samples.length;
      for (let j = i; j < n; j += 1)
        covariance[i * n + j] = (covariance[i * n + j] ?? 0) + ci * (centred[j] ?? 0);
    }
  }
  for (let i = 0; i < n; i += 1)
    for (let j = 0; j < i; j += 1) covariance[i * n + j] = covariance[j * n + i] ?? 0;
  const { values, vectors } = symmetricEigen(covariance, n);
  const largest = Math.max(...values);
  const transform = new Float64Array(n * n);
  for (let j = 0; j < n; j += 1) {
    // A direction with no spread is not amplified without bound.
    const scale = Math.max(values[j] ?? 0, largest * 1e-9) ** -power;
    for (let i = 0; i < n; i += 1) transform[i * n + j] = (vectors[i * n + j] ?? 0) * scale;
  }
  return { mean, transform };
}

/** `x · transform` for a row vector x of length n and an n × n row-major transform. */
export function applyTransform(x: ArrayLike<number>, transform: Float64Array, n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 1) {
    const xi = x[i] ?? 0;
    if (xi === 0) continue;
    for (let j = 0; j < n; j += 1) out[j] = (out[j] ?? 0) + xi * (transform[i * n + j] ?? 0);
  }
  return out;
}
