import { describe, expect, it } from "vitest";
import type { Reflection } from "../../../../src/domain/contracts/index.js";
import { defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";
import {
  decideVerdict,
  isPatternViolation,
  shouldStore,
  validateReflection,
} from "../../../../src/domain/quality/validate-reflection.js";
import { traceFacts } from "../../../../src/domain/quality/trace-facts.js";
import { goldenCases, type GoldenCase } from "../../../fixtures/quality/golden-outcomes.js";
import { taskEvent } from "../../../support/task-events.js";

function caseNamed(name: string): GoldenCase {
  const found = goldenCases.find((g) => g.name === name);
  if (!found) throw new Error(`no golden case named ${name}`);
  return found;
}

/** REFLECTOR_DEPTH_MODE=literal: the quality rules as written. */
const literal = {
  ...defaultQualityConfig,
  depth: { ...defaultQualityConfig.depth, mode: "literal" as const },
};

const kindOf = (violation: string) =>
  violation.startsWith("Incomplete")
    ? "completeness"
    : violation.startsWith("Shallow")
      ? "depth"
      : violation.startsWith("Not actionable")
        ? "actionability"
        : isPatternViolation(violation)
          ? "pattern"
          : violation;

const full = (c: (typeof goldenCases)[number]): Reflection => ({
  ...c.reflection,
  strategyText: "Rank hotels by rating before price when the user asks for quality.",
  importance: 0.8,
  confidence: 0.8,
  tags: ["hotel"],
  errorCategory: "wrong_choice",
});

function judge(c: (typeof goldenCases)[number]) {
  const evidence = {
    patternEvidence: new Map(
      Object.entries(c.evidence).map(([p, [occurrences, total]]) => [p, { occurrences, total }] as const),
    ),
    relevance: c.relevance,
    novelty: c.novelty,
  };
  const result = validateReflection(full(c), evidence, literal);
  const verdict = decideVerdict(result, literal);
  return {
    isValid: result.isValid,
    qualityScore: result.qualityScore,
    depthScore: result.metrics.depthScore,
    actionabilityScore: result.metrics.actionabilityScore,
    completeness: result.metrics.completeness,
    violations: result.violations.map(kindOf),
    verdict,
    stored: shouldStore(verdict, result, literal),
  };
}

describe("the literal reading reproduces the quality rules' golden outcomes", () => {
  it("holds 29 cases", () => {
    expect(goldenCases).toHaveLength(29);
  });

  it.each(goldenCases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const got = judge(c);
    expect(got.qualityScore).toBeCloseTo(c.expected.qualityScore, 9);
    expect(got.depthScore).toBeCloseTo(c.expected.depthScore, 9);
    expect({ ...got, qualityScore: 0, depthScore: 0 }).toEqual({
      ...c.expected,
      qualityScore: 0,
      depthScore: 0,
    });
  });

  it("words a pattern without enough evidence as the rules do", () => {
    const c = caseNamed("pattern with too few occurrences");
    const result = validateReflection(
      full(c),
      {
        patternEvidence: new Map([["budget-first hotel choice", { occurrences: 2, total: 2 }]]),
        relevance: c.relevance,
        novelty: c.novelty,
      },
      literal,
    );
    expect(result.violations).toEqual([
      "Invalid pattern 'budget-first hotel choice': confidence=0.00 < 0.75",
    ]);
  });
});

describe("the rules' deep example under the default (grounded) reading", () => {
  // The improvement prompt's "good" root cause, with everything else of the hotel lesson in place.
  const deep = caseNamed("deep, executable, complete, proven pattern");
  const evidence = { patternEvidence: new Map(), relevance: 0.8, novelty: 0.6 };
  const reflection = { ...full(deep), patterns: [] };

  it("is a symptom, not stored, by default: it names no step, value or name of any run", () => {
    const result = validateReflection(reflection, evidence, defaultQualityConfig);
    const verdict = decideVerdict(result, defaultQualityConfig);
    expect(result.metrics.depthScore).toBeCloseTo(0.3 + reflection.reflectionText.length / 5000, 9);
    expect(verdict).toBe("accepted_with_warnings");
    expect(shouldStore(verdict, result, defaultQualityConfig)).toBe(false);
  });

  it("is deep and stored by default once it names the run: the step, the agent, the call and its values", () => {
    const event = taskEvent({
      task: { description: "Book a hotel in Lisbon for the user, who asked for a quality hotel" },
      outcome: "failure",
      error: {
        category: "wrong_choice",
        type: "wrong_choice",
        message: "user rejected the booking: rating too low",
      },
      events: [
        {
          eventId: "e1",
          type: "tool_call",
          timestamp: "2026-11-20T10:00:00.000Z",
          toolName: "search_hotels",
          actor: "planner",
          content: "search_hotels(city=Lisbon, sort=price_asc)",
        },
        {
          eventId: "e2",
          type: "tool_response",
          timestamp: "2026-11-20T10:00:01.000Z",
          toolName: "search_hotels",
          actor: "planner",
          content: "Hotel Barato 45 EUR rating 5.1; Hotel Bom 90 EUR rating 8.7",
        },
        {
          eventId: "e3",
          type: "tool_call",
          timestamp: "2026-11-20T10:00:02.000Z",
          toolName: "book_hotel",
          actor: "planner",
          content: "book_hotel(hotel=Hotel Barato)",
        },
        {
          eventId: "e4",
          type: "error_event",
          timestamp: "2026-11-20T10:00:03.000Z",
          actor: "user",
          content: "user rejected the booking: rating too low",
          error: { message: "user rejected the booking: rating too low" },
        },
      ],
    });
    const grounded = {
      ...reflection,
      reflectionText:
        "My budget-first strategy conflicts with the user's quality preference: at step 3 the planner called book_hotel " +
        "for Hotel Barato (45 EUR, rating 5.1) because search_hotels sorted by sort=price_asc, and it assumed the cheapest " +
        "hotel was acceptable instead of Hotel Bom (rating 8.7), an incorrect assumption about what the user valued.",
      adjustments: ["Add constraint: rating >= 7 before price_asc in search_hotels"],
    };
    const result = validateReflection(
      grounded,
      { ...evidence, trace: traceFacts(event) },
      defaultQualityConfig,
    );
    const verdict = decideVerdict(result, defaultQualityConfig);
    expect(result.metrics.depthScore).toBeGreaterThanOrEqual(0.9);
    expect(verdict).toBe("accepted");
    expect(shouldStore(verdict, result, defaultQualityConfig)).toBe(true);
  });

  it("is deep and stored when read literally", () => {
    const result = validateReflection(reflection, evidence, literal);
    const verdict = decideVerdict(result, literal);
    expect(result.metrics.depthScore).toBeCloseTo(0.9 + reflection.reflectionText.length / 5000, 9);
    expect(shouldStore(verdict, result, literal)).toBe(true);
  });
});
