import { describe, expect, it } from "vitest";
import { decideStorage, type StorageInput } from "../../../../src/domain/memory/decide-storage.js";
import { defaultMemoryConfig } from "../../../../src/domain/memory/memory-config.js";
import { defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";

const good: StorageInput = {
  verdict: "accepted_with_warnings",
  qualityScore: 0.9,
  metrics: {
    completeness: 1,
    depthScore: 0.9,
    actionabilityScore: 1,
    patternValidity: 0,
    relevanceScore: 0.8,
    noveltyScore: 0.7,
  },
  missingFields: [],
  finding: null,
  nearest: null,
};
const decide = (input: Partial<StorageInput>) =>
  decideStorage({ ...good, ...input }, defaultQualityConfig, defaultMemoryConfig);
const reasonOf = (input: Partial<StorageInput>) => {
  const decision = decide(input);
  return decision.action === "none" ? decision.reason : `kept (${decision.action})`;
};

describe("storage decision", () => {
  it("adds a good lesson with nothing like it stored", () => {
    expect(decide({})).toEqual({ action: "add" });
    expect(decide({ nearest: { id: "r1", similarity: 0.89, qualityScore: 0.95 } })).toEqual({
      action: "add",
    });
  });

  it("never keeps a rejected one", () => {
    expect(decide({ verdict: "rejected", qualityScore: 0.4 })).toMatchObject({ action: "none" });
  });

  it("does not keep a lesson about another task, whatever its score", () => {
    expect(reasonOf({ metrics: { ...good.metrics, relevanceScore: 0.59 }, qualityScore: 0.95 })).toMatch(
      /relevance 0\.59 is below 0\.6/,
    );
  });

  it("does not keep half a lesson", () => {
    expect(
      reasonOf({ metrics: { ...good.metrics, completeness: 0.75 }, missingFields: ["learning"] }),
    ).toMatch(/learning missing/);
  });

  it("keeps a finding only when it changed the agent's behaviour", () => {
    expect(reasonOf({ finding: { errorType: "conflict", changedBehaviour: false } })).toMatch(
      /did not change/,
    );
    expect(decide({ finding: { errorType: "conflict", changedBehaviour: true } })).toEqual({ action: "add" });
  });

  it("merges the same lesson into the stored one: update when better judged, else only count it", () => {
    expect(decide({ nearest: { id: "r1", similarity: 0.9, qualityScore: 0.85 } })).toEqual({
      action: "update",
      into: "r1",
      similarity: 0.9,
    });
    expect(decide({ nearest: { id: "r1", similarity: 0.97, qualityScore: 0.9 } })).toEqual({
      action: "noop",
      into: "r1",
      similarity: 0.97,
    });
    // Below the storage bar, a near-duplicate still counts as another occurrence of the lesson.
    expect(
      decide({ qualityScore: 0.7, nearest: { id: "r1", similarity: 0.95, qualityScore: 0.9 } }),
    ).toMatchObject({
      action: "noop",
    });
  });

  it("holds a lesson below the storage bar back", () => {
    expect(decide({ qualityScore: 0.79 })).toMatchObject({
      action: "none",
      reason: "quality 0.79 is below the storage minimum 0.8",
    });
  });
});
