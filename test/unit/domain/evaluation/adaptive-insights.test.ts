import { describe, expect, it } from "vitest";
import {
  extractCommonIssues,
  insightLines,
  issueKey,
} from "../../../../src/domain/evaluation/adaptive-insights.js";

describe("adaptive prompting insights", () => {
  it("groups the same issue whatever its numbers and quoted specifics", () => {
    expect(issueKey("Shallow reflection: depth=0.33 < 0.7. Need root cause analysis")).toBe(
      "shallow reflection",
    );
    expect(issueKey("Invalid pattern 'timeout on x': confidence=0.00 < 0.75")).toBe("invalid pattern");
    expect(issueKey("2 claim(s) without a verified source")).toBe("claim(s) without a verified source");
  });

  it("keeps issues seen in at least two items, most frequent first, each item counted once", () => {
    const common = extractCommonIssues([
      ["Shallow reflection: depth=0.33 < 0.7.", "Not actionable: 0.40 < 0.8.", "Not actionable: 0.40 < 0.8."],
      ["Shallow reflection: depth=0.41 < 0.7.", "Not actionable: 0.60 < 0.8."],
      ["Shallow reflection: depth=0.12 < 0.7."],
      ["Nothing new: novelty=0.10 < 0.3"],
    ]);
    expect(common).toEqual([
      { issue: "Shallow reflection", count: 3 },
      { issue: "Not actionable", count: 2 },
    ]);
    expect(insightLines(common)).toEqual([
      "Shallow reflection (in 3 recent low-quality results)",
      "Not actionable (in 2 recent low-quality results)",
    ]);
  });

  it("has nothing to say without history", () => {
    expect(extractCommonIssues([])).toEqual([]);
    expect(extractCommonIssues([["only once"]])).toEqual([]);
  });
});
