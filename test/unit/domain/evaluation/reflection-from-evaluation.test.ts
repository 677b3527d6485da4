import { describe, expect, it } from "vitest";
import { findingFromEvaluation } from "../../../../src/domain/evaluation/reflection-from-evaluation.js";

describe("reflection from evaluation", () => {
  it("turns a conflict into a `conflict` finding, ahead of unverified claims", () => {
    const finding = findingFromEvaluation({
      verificationResults: [
        { status: "unverified", claimText: "60% of firms" },
        { status: "conflict", claimText: "entered into force 2025", conflictReason: "EUR-Lex says 2024" },
      ],
    });
    expect(finding).toMatchObject({ errorType: "conflict", content: "Detected conflict: EUR-Lex says 2024" });
  });

  it("uses 'Unknown' when a conflict has no reason", () => {
    expect(findingFromEvaluation({ verificationResults: [{ status: "conflict" }] })?.content).toBe(
      "Detected conflict: Unknown",
    );
  });

  it("cuts an unverified claim to 100 characters", () => {
    const claim = "x".repeat(150);
    const finding = findingFromEvaluation({
      verificationResults: [{ status: "unverified", claimText: claim }],
    });
    expect(finding).toMatchObject({ errorType: "unverified_claim" });
    expect(finding?.content).toBe(`Made unverified claim about: ${"x".repeat(100)}`);
  });

  it("reads a critique that reports CONFLICTS as a factual error (first 200 characters)", () => {
    const critique = `CONFLICTS: the answer's revenue figure disagrees with the filing. ${"y".repeat(300)}`;
    const finding = findingFromEvaluation({ evaluation: { critique } });
    expect(finding).toMatchObject({ errorType: "factual_error", content: critique.slice(0, 200) });
  });

  it("records a quality gain above 0.1 and ignores one at or below it", () => {
    const gain = findingFromEvaluation({
      scores: { qualityBefore: 0.5, qualityAfter: 0.75 },
      evaluation: { critique: "The first draft skipped the pricing table." },
    });
    expect(gain).toMatchObject({
      errorType: "quality_improvement",
      content: "Quality improved by 0.25: The first draft skipped the pricing table.",
      qualityDelta: 0.25,
      changedBehaviour: true,
    });
    expect(findingFromEvaluation({ scores: { qualityBefore: 0.5, qualityAfter: 0.6 } })).toBeNull();
    expect(findingFromEvaluation({ verificationResults: [{ status: "verified" }] })).toBeNull();
  });

  it("says whether the reflection changed behaviour: the agent's flag first, then the scores", () => {
    const conflict = { verificationResults: [{ status: "conflict" as const }] };
    expect(findingFromEvaluation(conflict)?.changedBehaviour).toBe(false);
    expect(findingFromEvaluation({ ...conflict, evaluation: { revised: true } })?.changedBehaviour).toBe(
      true,
    );
    expect(
      findingFromEvaluation({ ...conflict, scores: { qualityBefore: 0.4, qualityAfter: 0.45 } })
        ?.changedBehaviour,
    ).toBe(true);
    expect(
      findingFromEvaluation({
        ...conflict,
        scores: { qualityBefore: 0.4, qualityAfter: 0.9 },
        evaluation: { revised: false },
      })?.changedBehaviour,
    ).toBe(false);
  });
});
