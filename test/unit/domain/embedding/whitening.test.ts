import { describe, expect, it } from "vitest";
import { applyTransform, symmetricEigen, whiteningOf } from "../../../../src/domain/embedding/whitening.js";

describe("symmetric eigen-decomposition", () => {
  it("finds the eigenvalues and orthonormal eigenvectors of a symmetric matrix", () => {
    const n = 3;
    const a = new Float64Array([4, 1, 2, 1, 3, 0, 2, 0, 5]);
    const { values, vectors } = symmetricEigen(a, n);
    // A v = λ v for every column, and the columns are orthonormal.
    for (let j = 0; j < n; j += 1) {
      for (let i = 0; i < n; i += 1) {
        let av = 0;
        for (let k = 0; k < n; k += 1) av += (a[i * n + k] ?? 0) * (vectors[k * n + j] ?? 0);
        expect(av).toBeCloseTo((values[j] ?? 0) * (vectors[i * n + j] ?? 0), 9);
      }
      for (let m = 0; m < n; m += 1) {
        let dot = 0;
        for (let k = 0; k < n; k += 1) dot += (vectors[k * n + j] ?? 0) * (vectors[k * n + m] ?? 0);
        expect(dot).toBeCloseTo(j === m ? 1 : 0, 9);
      }
    }
    expect(values.reduce((s, v) => s + v, 0)).toBeCloseTo(12, 9); // the trace
  });
});

describe("square-root whitening", () => {
  it("centres the samples and evens out their spread: power ½ gives unit variance in every direction", () => {
    // Stretched 10× along (1, 1), 1× along (1, −1), centred at (5, 5).
    const samples = [-1, 1].flatMap((a) =>
      [-1, 1].map((b) => new Float64Array([5 + 10 * a + b, 5 + 10 * a - b])),
    );
    const full = whiteningOf(samples, 2, 0.5);
    const white = samples.map((x) =>
      applyTransform(
        x.map((v, d) => v - (full.mean[d] ?? 0)),
        full.transform,
        2,
      ),
    );
    for (let d = 0; d < 2; d += 1) {
      expect(white.reduce((s, w) => s + (w[d] ?? 0), 0)).toBeCloseTo(0, 9);
      expect(white.reduce((s, w) => s + (w[d] ?? 0) ** 2, 0) / white.length).toBeCloseTo(1, 9);
    }
    // Power ¼: the spreads' ratio goes from 10 to √10.
    const half = whiteningOf(samples, 2, 0.25);
    const spread = (d: number) =>
      Math.sqrt(
        samples
          .map((x) =>
            applyTransform(
              x.map((v, k) => v - (half.mean[k] ?? 0)),
              half.transform,
              2,
            ),
          )
          .reduce((s, w) => s + (w[d] ?? 0) ** 2, 0),
      );
    const ratio = Math.max(spread(0), spread(1)) / Math.min(spread(0), spread(1));
    expect(ratio).toBeCloseTo(Math.sqrt(10), 6);
  });
});
