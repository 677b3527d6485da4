import { describe, expect, it } from "vitest";
import { meanOfTokens, tokenCount, zipfWeight } from "../../../../src/domain/embedding/static-embedding.js";

const table = {
  dimensions: 2,
  // token 0: (1, 0); token 1: (0, 1); token 2: (3, 4)
  vectors: new Float32Array([1, 0, 0, 1, 3, 4]),
};

describe("static token embeddings", () => {
  it("averages the tokens' rows and scales the mean to length 1", () => {
    expect(tokenCount(table)).toBe(3);
    const [x, y] = meanOfTokens(table, [0, 1]);
    expect(x).toBeCloseTo(Math.SQRT1_2);
    expect(y).toBeCloseTo(Math.SQRT1_2);
    expect(meanOfTokens(table, [2])).toEqual([0.6, 0.8].map((v) => expect.closeTo(v, 6) as number));
  });

  it("counts a repeated token each time it occurs", () => {
    const [x, y] = meanOfTokens(table, [0, 0, 0, 1]);
    expect((x ?? 0) / (y ?? 1)).toBeCloseTo(3);
  });

  it("skips ids outside the table and gives no known token the zero vector", () => {
    expect(meanOfTokens(table, [7, -1, 1])).toEqual([0, 1]);
    expect(meanOfTokens(table, [])).toEqual([0, 0]);
    expect(meanOfTokens(table, [42])).toEqual([0, 0]);
  });

  it("weighs frequent tokens (early in the vocabulary) less than rare ones, all within (0, 1)", () => {
    const frequent = zipfWeight(2_000, 30_522);
    const rare = zipfWeight(29_000, 30_522);
    expect(frequent).toBeGreaterThan(0);
    expect(frequent).toBeLessThan(rare);
    expect(rare).toBeLessThan(1);
    expect(zipfWeight(0, 30_522)).toBeLessThan(0.01);
  });
});
