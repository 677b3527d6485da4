import { describe, expect, it } from "vitest";
import { withoutCodeFence } from "../../../src/adapters/llm/answer-json.js";

describe("a model's answer without its code fence", () => {
  it("takes off ```json … ``` and plain ``` … ```", () => {
    expect(withoutCodeFence('```json\n{"a": 1}\n```')).toBe('{"a": 1}');
    expect(withoutCodeFence('```JSON {"a": 1}```')).toBe('{"a": 1}');
    expect(withoutCodeFence('  ```\n{"a": 1}\n```  ')).toBe('{"a": 1}');
    expect(withoutCodeFence('{"a": 1}')).toBe('{"a": 1}');
  });

  it("stays linear on a megabyte of whitespace (a backtracking pattern took minutes)", () => {
    const hostile = "```" + " ".repeat(1_000_000) + "x" + "\n".repeat(1_000_000);
    const started = performance.now();
    expect(withoutCodeFence(hostile)).toBe("x");
    // Generous: linear work on 2 MB takes milliseconds; the old pattern did not finish.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("a model's reflection, bounded before it is stored", () => {
  it("removes control characters and lone surrogates and cuts texts, lists and tags", async () => {
    const { parseReflectionOutput, reflectionLimits } =
      await import("../../../src/adapters/llm/reflection-output.js");
    const answer = {
      reflectionText: `Root cause\u0000: the agent \u001b[31mretried\u001b[0m ${"x".repeat(2_000_000)}`,
      strategyText: "Open the page \ud800 first",
      importance: 0.5,
      confidence: 0.5,
      tags: Array.from({ length: 50 }, () => "t".repeat(5_000)),
      errorCategory: "unverified_claim",
      patterns: ["answer from snippet"],
      adjustments: ["open the source page"],
      learning: "Check sources.",
    };
    const secrets = { canary: "CANARY-1", nonce: "n1" };
    const parsed = parseReflectionOutput(JSON.stringify(answer), secrets, "system");
    if (!parsed.ok) throw new Error(parsed.problems.join("; "));
    const r = parsed.reflection;
    expect(r.reflectionText.startsWith("Root cause: the agent [31mretried[0m x")).toBe(true);
    expect(r.reflectionText).toHaveLength(reflectionLimits.textChars);
    expect(r.strategyText).toBe("Open the page \ufffd first");
    expect(r.tags).toHaveLength(reflectionLimits.listItems);
    expect(r.tags.every((t) => t.length === reflectionLimits.tagChars)).toBe(true);
  });
});
