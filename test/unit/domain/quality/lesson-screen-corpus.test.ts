import { describe, expect, it } from "vitest";
import type { Reflection } from "../../../../src/domain/contracts/index.js";
import { lessonPrompt } from "../../../../src/domain/lessons/lesson-prompt.js";
import {
  normaliseForScreen,
  refusalOf,
  screenInstructions,
  screenReflection,
} from "../../../../src/domain/quality/lesson-screen.js";
import { defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";
import { traceFacts } from "../../../../src/domain/quality/trace-facts.js";
import {
  decideVerdict,
  storageProblem,
  validateReflection,
} from "../../../../src/domain/quality/validate-reflection.js";
import { benign, poisoned } from "../../../fixtures/screen/obfuscation-corpus.js";
import { taskEvent } from "../../../support/task-events.js";

const good: Reflection = {
  reflectionText:
    'The call postgres_query at step e2 timed out ("canceling statement due to statement timeout") because the JOIN scanned all orders; the agent assumed one query would do.',
  strategyText: "Paginate large reads of postgres_query.",
  importance: 0.7,
  confidence: 0.7,
  tags: ["timeout", "postgres_query"],
  errorCategory: "timeout_error",
  patterns: ["timeout on postgres_query"],
  adjustments: [
    "set page_size = 1000 for postgres_query",
    "add constraint: filter postgres_query on customer_id",
  ],
  learning: "Large reads through postgres_query must be paginated and filtered on an indexed key.",
};

describe("the obfuscation corpus", () => {
  it("holds at least the review's 26 kinds", () => {
    expect(poisoned.length).toBeGreaterThanOrEqual(26);
    expect(new Set(poisoned.map(([kind]) => kind)).size).toBe(poisoned.length);
  });

  it.each(poisoned)("refuses %s", (_, text) => {
    expect(refusalOf(text)).not.toBeNull();
  });

  it.each(benign)("lets a real lesson's instruction through: %s", (text) => {
    expect(refusalOf(text)).toBeNull();
  });

  it.each(poisoned)(
    "stores a good lesson with %s in one adjustment, without it, and never serves it",
    (_, text) => {
      const offered = { ...good, adjustments: [...good.adjustments, text] };
      const validation = validateReflection(
        offered,
        {
          patternEvidence: new Map(offered.patterns.map((p) => [p, { occurrences: 5, total: 5 }])),
          relevance: 1,
          novelty: 1,
          trace: traceFacts(taskEvent()),
        },
        defaultQualityConfig,
      );
      const verdict = decideVerdict(validation, defaultQualityConfig);
      expect(validation.refused?.map((r) => r.text)).toEqual([text]);
      expect(storageProblem(verdict, validation, defaultQualityConfig)).toBeNull();
      const stored = screenReflection(offered).reflection;
      expect(stored.adjustments).toEqual(good.adjustments);
      expect(lessonPrompt(stored)).not.toContain(text);
      // What the outcome says of it names the reason, not the text.
      expect(validation.violations.join("\n")).not.toContain(text);
    },
  );
});

describe("the screen's normal form", () => {
  it("reads full-width letters as ASCII and drops zero-width and bidi characters", () => {
    expect(normaliseForScreen("ｃｕ\u200bｒ\u202eｌ")).toBe("curl");
  });

  it("keeps the order of the instructions it keeps", () => {
    const { kept, refused } = screenInstructions(["set a = 1", "pip install x", "set b = 2"]);
    expect(kept).toEqual(["set a = 1", "set b = 2"]);
    expect(refused).toEqual([{ text: "pip install x", reason: "a package-manager command" }]);
  });
});
