import { describe, expect, it } from "vitest";
import type { Reflection } from "../../../../src/domain/contracts/index.js";
import { assessDepth } from "../../../../src/domain/quality/assess-depth.js";
import { checkCompleteness } from "../../../../src/domain/quality/check-completeness.js";
import { runImprovementLoop } from "../../../../src/domain/quality/improvement-loop.js";
import { episodeMatchesPattern, patternValidity } from "../../../../src/domain/quality/pattern-validity.js";
import { defaultQualityConfig as config } from "../../../../src/domain/quality/quality-config.js";
import { scoreActionability } from "../../../../src/domain/quality/score-actionability.js";
import {
  decideVerdict,
  shouldStore,
  validateReflection,
  type ValidationResult,
} from "../../../../src/domain/quality/validate-reflection.js";

const depth = (text: string) => assessDepth(text, config.depth);
/** The quality rules read literally (indicator words): the golden values below are this reading's. */
const literal = { ...config, depth: { ...config.depth, mode: "literal" as const } };
const act = (adjustments: string[]) => scoreActionability(adjustments, config.actionability);

const hotel: Reflection = {
  reflectionText:
    "My budget-first strategy conflicts with the user's quality preference: I prioritized price because I assumed the " +
    "cheapest hotel was acceptable, an incorrect assumption about what the user valued.",
  strategyText: "Rank hotels by rating before price when the user asks for quality.",
  importance: 0.8,
  confidence: 0.8,
  tags: ["hotel"],
  errorCategory: "wrong_choice",
  patterns: ["budget-first hotel choice"],
  adjustments: ["Add constraint: quality >= 7", "Change priority from price to quality"],
  learning: "When the user states a quality preference, price is a tie-breaker, not the first criterion.",
};

describe("depth score", () => {
  it("scores the hotel-booking examples by their indicators", () => {
    // Under 50 characters: 0.2 whatever it says ("It failed", "Wrong hotel selected").
    expect(depth("It failed")).toBe(0.2);
    expect(depth("Budget-first strategy conflicts with user preference")).toBeCloseTo(0.3 + 52 / 5000, 6);
    // "wrong result" is a shallow indicator: 0.5 plus the length bonus.
    const shallow = "The agent returned the wrong result for the booking request that the user made.";
    expect(depth(shallow)).toBeCloseTo(0.5 + shallow.length / 5000, 6);
    // Two medium indicators ("because", "assumed"): 0.7.
    const medium =
      "Selected the cheap hotel because it assumed the user wanted the lowest price for the stay.";
    expect(depth(medium)).toBeCloseTo(0.7 + medium.length / 5000, 6);
    // Two deep indicators ("strategy", "conflicting"): 0.9.
    const deep =
      "The budget-first strategy is conflicting with the user's stated preference for a quiet, good hotel.";
    expect(depth(deep)).toBeCloseTo(0.9 + deep.length / 5000, 6);
  });

  it("caps the length bonus at 0.1 and the score at 1.0", () => {
    const long = `The strategy and approach were wrong. ${"x".repeat(6000)}`;
    expect(depth(long)).toBe(1);
    const surface = `It failed. ${"y".repeat(1000)}`;
    expect(depth(surface)).toBeCloseTo(0.3 + 0.1, 6);
  });
});

describe("actionability score", () => {
  it("follows the documented ladder", () => {
    expect(act([])).toBe(0);
    expect(act(["Do better next time"])).toBe(0.4);
    expect(act(["Add constraint: quality >= 7"])).toBe(1);
    expect(act(["Change priority from price to quality"])).toBe(1);
    expect(
      act(["set priority = quality", "filter results where score < 0.7", "remove budget-first strategy"]),
    ).toBe(1);
    // 4 of 5 executable = 80%.
    expect(act(["set a = 1", "set b = 2", "set c = 3", "set d = 4", "be nicer"])).toBe(0.8);
    expect(act(["Add constraint: x > 1", "try harder", "pay attention"])).toBe(0.4);
    expect(act(["Add constraint: x > 1", "consider the budget"])).toBe(0.6);
  });
});

describe("completeness", () => {
  it("counts fields over 10 characters and non-empty lists; patterns are hypotheses, [] is an answer", () => {
    expect(checkCompleteness(hotel, config.completeness)).toEqual({ score: 1, missingFields: [] });
    expect(checkCompleteness({ ...hotel, patterns: [] }, config.completeness)).toEqual({
      score: 1,
      missingFields: [],
    });
    expect(checkCompleteness({ ...hotel, adjustments: [] }, config.completeness)).toEqual({
      score: 0.75,
      missingFields: ["strategy_adjustments"],
    });
    expect(
      checkCompleteness({ ...hotel, learning: "too short", adjustments: [] }, config.completeness),
    ).toEqual({
      score: 0.5,
      missingFields: ["strategy_adjustments", "learning"],
    });
  });
});

describe("pattern validity", () => {
  it("needs 70% of the keywords in an episode and 3 occurrences", () => {
    expect(
      episodeMatchesPattern("query timeout on postgres_query after 30s", "timeout on postgres_query"),
    ).toBe(true);
    expect(episodeMatchesPattern("timeout calling github", "timeout on postgres_query large join")).toBe(
      false,
    );
    expect(patternValidity({ occurrences: 2, total: 2 })).toBe(0);
    expect(patternValidity({ occurrences: 3, total: 4 })).toBe(0.75);
    expect(patternValidity({ occurrences: 9, total: 10 })).toBe(0.9);
  });
});

describe("validateReflection", () => {
  const evidence = {
    patternEvidence: new Map([["budget-first hotel choice", { occurrences: 4, total: 5 }]]),
    relevance: 0.7,
    novelty: 0.6,
  };

  it("accepts a deep, executable, complete, evidenced reflection with the weighted score (literal reading)", () => {
    const result = validateReflection(hotel, evidence, literal);
    expect(result.violations).toEqual([]);
    expect(result.isValid).toBe(true);
    const d = 0.9 + hotel.reflectionText.length / 5000;
    expect(result.metrics).toMatchObject({ completeness: 1, actionabilityScore: 1, patternValidity: 0.8 });
    expect(result.metrics.depthScore).toBeCloseTo(d, 4);
    expect(result.qualityScore).toBeCloseTo(0.2 * 1 + 0.3 * d + 0.3 * 1 + 0.1 * 0.7 + 0.1 * 0.6, 4);
    expect(decideVerdict(result, config)).toBe("accepted");
  });

  it("names each violation, and grades the verdict by score (literal reading)", () => {
    const vague: Reflection = {
      ...hotel,
      reflectionText: "It failed.",
      adjustments: ["Do better next time"],
      patterns: ["hotel"],
      learning: "short",
    };
    const result = validateReflection(vague, { ...evidence, relevance: 0.2, novelty: 0.1 }, literal);
    expect(result.isValid).toBe(false);
    expect(result.violations).toEqual([
      "Incomplete reflection: 0.50 < 0.9. Missing fields: analysis, learning",
      "Shallow reflection: depth=0.20 < 0.7. Need root cause analysis, not just symptoms.",
      "Not actionable: 0.40 < 0.8. Adjustments must be concrete and executable.",
      "Invalid pattern 'hotel': confidence=0.00 < 0.75",
    ]);
    // Read literally, relevance and novelty are weighed but are no violation; the default enforces both.
    expect(
      validateReflection(vague, { ...evidence, relevance: 0.2, novelty: 0.1 }, config).violations,
    ).toEqual(
      expect.arrayContaining([
        "Not relevant to the task: relevance=0.20 < 0.6",
        "Nothing new: novelty=0.10 < 0.3",
      ]),
    );
    // "It failed." is 10 characters, not over 10: analysis counts as missing.
    // 0.2*0.5 + 0.3*0.2 + 0.3*0.4 + 0.1*0.2 + 0.1*0.1 = 0.31
    expect(result.qualityScore).toBeCloseTo(0.31, 6);
    expect(decideVerdict(result, config)).toBe("rejected");
    expect(decideVerdict({ isValid: false, qualityScore: 0.5 }, config)).toBe("accepted_with_warnings");
    expect(decideVerdict({ isValid: false, qualityScore: 0.4999 }, config)).toBe("rejected");
  });

  it("stores only non-rejected reflections at or above the storage bar", () => {
    const judged = (qualityScore: number) => ({
      qualityScore,
      missingFields: [],
      metrics: { ...validateReflection(hotel, evidence, literal).metrics },
    });
    expect(shouldStore("accepted", judged(0.8), literal)).toBe(true);
    expect(shouldStore("accepted_with_warnings", judged(0.79), literal)).toBe(false);
    expect(shouldStore("rejected", judged(0.95), literal)).toBe(false);
  });
});

describe("improvement loop", () => {
  const result = (score: number, valid = false): ValidationResult => ({
    isValid: valid,
    qualityScore: score,
    violations: valid ? [] : [`score ${score}`],
    retryable: !valid,
    metrics: {
      completeness: 1,
      depthScore: 0,
      actionabilityScore: 0,
      patternValidity: null,
      relevanceScore: 0,
      noveltyScore: 0,
    },
    invalidPatterns: [],
    missingFields: [],
  });

  it("feeds violations back, stops when valid, and keeps the best attempt otherwise", async () => {
    const seen: (string[] | undefined)[] = [];
    const scores = [0.6, 0.7, 0.65];
    const out = await runImprovementLoop({
      maxAttempts: 3,
      generate: (attempt, feedback) => {
        seen.push(feedback?.violations);
        return Promise.resolve({ ...hotel, learning: `attempt ${attempt} learning text` });
      },
      evaluate: (reflection) =>
        Promise.resolve(result(scores[Number(/\d/.exec(reflection.learning)?.[0]) - 1] ?? 0)),
    });
    expect(seen).toEqual([undefined, ["score 0.6"], ["score 0.7"]]);
    expect(out.attempts).toBe(3);
    expect(out.reflection.learning).toBe("attempt 2 learning text");
    expect(out.validation.qualityScore).toBe(0.7);

    const early = await runImprovementLoop({
      maxAttempts: 3,
      generate: () => Promise.resolve(hotel),
      evaluate: () => Promise.resolve(result(0.9, true)),
    });
    expect(early.attempts).toBe(1);
  });
});
