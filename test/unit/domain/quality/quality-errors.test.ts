import { describe, expect, it } from "vitest";
import { defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";
import {
  IncompleteReflectionError,
  InsufficientDepthError,
  InvalidPatternError,
  NotActionableError,
  qualityErrorsOf,
  ReflectionQualityError,
} from "../../../../src/domain/quality/quality-errors.js";
import { validateReflection } from "../../../../src/domain/quality/validate-reflection.js";

describe("quality exception classes", () => {
  it("gives one error per violation, of its rule's class, all of them ReflectionQualityError", () => {
    const result = validateReflection(
      {
        reflectionText: "It failed.",
        strategyText: null,
        importance: 0.5,
        confidence: 0.5,
        tags: [],
        errorCategory: "x",
        patterns: ["hotel"],
        adjustments: ["Do better next time"],
        learning: "short",
      },
      { patternEvidence: new Map(), relevance: 0.2, novelty: 0.9 },
      defaultQualityConfig,
    );
    const errors = qualityErrorsOf(result);
    expect(errors.map((e) => e.name)).toEqual([
      "IncompleteReflectionError",
      "InsufficientDepthError",
      "NotActionableError",
      "InvalidPatternError",
      "ReflectionQualityError",
    ]);
    expect(errors[0]).toBeInstanceOf(IncompleteReflectionError);
    expect(errors[1]).toBeInstanceOf(InsufficientDepthError);
    expect(errors[2]).toBeInstanceOf(NotActionableError);
    expect(errors[3]).toBeInstanceOf(InvalidPatternError);
    for (const error of errors) expect(error).toBeInstanceOf(ReflectionQualityError);
    expect(errors.map((e) => e.message)).toEqual(result.violations);
    expect(qualityErrorsOf({ violations: [] })).toEqual([]);
  });
});
