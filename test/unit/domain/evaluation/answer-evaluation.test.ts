import { describe, expect, it } from "vitest";
import {
  evaluateAnswerHeuristically,
  finishEvaluation,
} from "../../../../src/domain/evaluation/answer-evaluation.js";

const question =
  "When did the EU AI Act enter into force, and from when do the prohibited-practice rules apply?";
const goodAnswer =
  "The EU AI Act entered into force on 1 August 2024. The prohibited-practice rules apply from 2 February 2025, " +
  "six months after entry into force, as Article 113 of Regulation (EU) 2024/1689 sets out.";

describe("answer self-evaluation", () => {
  it("computes quality as the mean of the three scores and retries below 0.5", () => {
    const low = finishEvaluation({
      evaluator: "heuristic",
      confidence: 0.4,
      relevance: 0.5,
      completeness: 0.5,
      issues: [],
      improvements: [],
    });
    expect(low.quality).toBe(0.47);
    expect(low.shouldRetry).toBe(true);
    const ok = finishEvaluation({ ...low, confidence: 0.5 });
    expect(ok.quality).toBe(0.5);
    expect(ok.shouldRetry).toBe(false);
  });

  it("decides the retry on the unrounded mean: 0.4967 shows as 0.5 and still retries", () => {
    const near = finishEvaluation({
      evaluator: "heuristic",
      confidence: 0.5,
      relevance: 0.49,
      completeness: 0.5,
      issues: [],
      improvements: [],
    });
    expect(near.quality).toBe(0.5);
    expect(near.shouldRetry).toBe(true);
  });

  it("has nothing to judge without both a question and an answer", () => {
    expect(
      evaluateAnswerHeuristically({ task: { description: "x", query: question }, events: [] }),
    ).toBeNull();
    expect(evaluateAnswerHeuristically({ task: { description: "x", answer: "y" }, events: [] })).toBeNull();
  });

  it("scores a direct, verified, complete answer high", () => {
    const result = evaluateAnswerHeuristically({
      task: { description: "research", query: question, answer: goodAnswer },
      verificationResults: [{ status: "verified" }, { status: "verified" }],
      events: [],
    });
    expect(result).toMatchObject({ evaluator: "heuristic", shouldRetry: false, issues: [] });
    expect(result?.quality).toBeGreaterThanOrEqual(0.8);
  });

  it("lowers confidence for contradicted and unverified claims and says why", () => {
    const result = evaluateAnswerHeuristically({
      task: { description: "research", query: question, answer: goodAnswer },
      verificationResults: [
        { status: "conflict", claimText: "entered into force on 1 August 2025" },
        { status: "unverified", claimText: "60% of firms" },
      ],
      events: [],
    });
    expect(result?.confidence).toBe(0.45);
    expect(result?.issues.join(" ")).toMatch(/contradicted by sources: entered into force on 1 August 2025/);
    expect(result?.improvements).toContain(
      "cite a verified source for every factual claim, or drop the claim",
    );
  });

  it("marks a hedging non-answer for retry", () => {
    const result = evaluateAnswerHeuristically({
      task: { description: "research", query: question, answer: "I don't know, maybe it was recently" },
      events: [],
    });
    expect(result?.relevance).toBeLessThanOrEqual(0.2);
    expect(result?.shouldRetry).toBe(true);
    expect(result?.issues).toContain("the answer declines or does not answer the question");
  });

  it("notices an answer that is cut off", () => {
    const result = evaluateAnswerHeuristically({
      task: {
        description: "research",
        query: question,
        answer: `${goodAnswer} The high-risk obligations apply from`,
      },
      events: [],
    });
    expect(result?.issues).toContain("the answer looks cut off");
  });
});
