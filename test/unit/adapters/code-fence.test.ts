import { describe, expect, it } from "vitest";
import { withoutCodeFence } from "../../../src/adapters/llm/prompts.js";

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
