import { describe, expect, it } from "vitest";
import { ReflectorError } from "../../../src/domain/errors.js";
import { lessonCheckWithinBudget } from "../../../src/pipeline/lesson-check.js";
import type { LessonCheck } from "../../../src/pipeline/lesson-check.js";

describe("the lesson check within the tenant's budget", () => {
  const asked: string[] = [];
  const check: LessonCheck = {
    applies: (tenantId) => {
      asked.push(tenantId);
      return Promise.resolve([0]);
    },
  };
  const candidates = [{ advice: "a", adjustments: [], tags: [] }];
  const task = { task: "t" };

  it("asks the model for an admitted tenant, and answers by meaning for one over budget or a gate that fails", async () => {
    const gated = lessonCheckWithinBudget(check, {
      admit: (tenantId) => {
        if (tenantId === "waiting") return Promise.reject(new ReflectorError("LLM_BUDGET_EXHAUSTED", "over"));
        return Promise.resolve(tenantId === "rich" ? "model" : "offline");
      },
    });
    expect(await gated.applies("rich", task, candidates)).toEqual([0]);
    expect(await gated.applies("poor", task, candidates)).toBeNull();
    expect(await gated.applies("waiting", task, candidates)).toBeNull();
    expect(asked).toEqual(["rich"]);
  });
});
