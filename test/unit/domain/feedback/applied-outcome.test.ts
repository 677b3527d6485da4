import { describe, expect, it } from "vitest";
import {
  appliedOutcomes,
  keepsFailing,
  qualityAfterOutcomes,
} from "../../../../src/domain/feedback/applied-outcome.js";
import { isServed } from "../../../../src/domain/feedback/effective-quality.js";

describe("applied outcomes of a rerun", () => {
  it("counts a successful rerun as helped for every lesson it carried, once each", () => {
    expect(appliedOutcomes({ outcome: "success", carried: ["a", "b", "a"], filedUnder: null })).toEqual([
      { reflectionId: "a", result: "helped" },
      { reflectionId: "b", result: "helped" },
    ]);
  });

  it("counts a rerun that fails the same way against that lesson only, and a different failure against none", () => {
    expect(appliedOutcomes({ outcome: "failure", carried: ["a", "b"], filedUnder: "b" })).toEqual([
      { reflectionId: "b", result: "failed_again" },
    ]);
    expect(appliedOutcomes({ outcome: "timeout", carried: ["a"], filedUnder: "other" })).toEqual([]);
    expect(appliedOutcomes({ outcome: "partial", carried: ["a"], filedUnder: null })).toEqual([]);
  });
});

describe("quality after applied outcomes", () => {
  it("withholds a lesson that keeps failing when applied, without a vote", () => {
    expect(keepsFailing(0, 2)).toBe(false);
    expect(keepsFailing(1, 3)).toBe(true);
    expect(keepsFailing(2, 3)).toBe(false);
    const q = qualityAfterOutcomes(0.85, null, 1, 3);
    expect(q).toBe(0.3);
    expect(isServed(q)).toBe(false);
  });

  it("moves the quality a little with the net count, at most 0.1 either way", () => {
    expect(qualityAfterOutcomes(0.7, null, 2, 0)).toBe(0.74);
    expect(qualityAfterOutcomes(0.7, null, 20, 0)).toBe(0.8);
    expect(qualityAfterOutcomes(0.7, null, 0, 2)).toBe(0.66);
    expect(qualityAfterOutcomes(0.95, null, 10, 0)).toBe(1);
    // No outcome: the quality after votes, untouched (not even rounded).
    expect(qualityAfterOutcomes(0.8494, null, 0, 0)).toBe(0.8494);
    expect(qualityAfterOutcomes(0.3, "down", 0, 0)).toBe(0.3);
  });

  it("lets a deciding thumbs-up outrank failures, and keeps a thumbs-down's cap", () => {
    expect(qualityAfterOutcomes(0.7, "up", 0, 5)).toBe(0.6);
    expect(isServed(qualityAfterOutcomes(0.7, "up", 0, 5))).toBe(true);
    expect(qualityAfterOutcomes(0.3, "down", 10, 0)).toBe(0.3);
  });
});
