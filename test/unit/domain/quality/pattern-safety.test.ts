import { describe, expect, it } from "vitest";
import { patternProblem } from "../../../../src/domain/quality/pattern-safety.js";
import { QualityConfig, defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";
import {
  namesSomethingConcrete,
  scoreActionability,
} from "../../../../src/domain/quality/score-actionability.js";
import { textFacts } from "../../../../src/domain/quality/trace-facts.js";

const sections = { depth: {}, patternValidity: {}, relevance: {}, novelty: {}, completeness: {} };

describe("quality patterns from settings", () => {
  it("accepts the default patterns and a plain configured one", () => {
    for (const pattern of [
      ...defaultQualityConfig.actionability.actionablePatterns,
      ...defaultQualityConfig.actionability.vaguePatterns,
    ])
      expect(patternProblem(pattern)).toBeNull();
    const parsed = QualityConfig.parse({
      ...sections,
      actionability: { vaguePatterns: ["keep an eye on .+"] },
    });
    expect(parsed.actionability.vaguePatterns).toEqual(["keep an eye on .+"]);
  });

  it.each(["(a+)+$", "(\\w+\\s?)*x", "(.*)\\1", ".*.*.*.*x", "("])(
    "refuses %s, whose search can cost more than linear time (or is no pattern)",
    (pattern) => {
      const parsed = QualityConfig.safeParse({
        ...sections,
        actionability: { actionablePatterns: [pattern] },
      });
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain("refused");
    },
  );

  it("scores an adjustment of 100,000 characters without searching all of it", () => {
    const huge = `change ${"change ".repeat(15_000)}`;
    // CPU time, not wall time: what the work costs, whatever else the machine runs meanwhile.
    const started = process.cpuUsage();
    const cpuMs = () => {
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000;
    };
    const score = scoreActionability([huge, huge], defaultQualityConfig.actionability, textFacts("change"));
    expect(cpuMs()).toBeLessThan(250);
    expect(score).toBeGreaterThanOrEqual(0);
    const names = new Set(Array.from({ length: 2000 }, (_, i) => `tool_${String(i)}`));
    const facts = { ...textFacts("x"), names };
    const before = cpuMs();
    expect(namesSomethingConcrete(`use ${"word ".repeat(100_000)} tool_1999`, facts)).toBe(false);
    expect(cpuMs() - before).toBeLessThan(250);
  });
});
