import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { AppliedOutcome } from "../../../src/domain/feedback/applied-outcome.js";
import { countAppliedOutcomes } from "../../../src/observability/applied-outcome-metrics.js";

describe("applied outcome metrics", () => {
  it("counts recorded outcomes by result, and nothing when the store fails", async () => {
    const registry = new Registry();
    let fail = false;
    const stored: AppliedOutcome[] = [];
    const store = countAppliedOutcomes(
      {
        lessonsCarriedTo: () => Promise.resolve(["a"]),
        recordApplied: (_t, _e, outcomes) => {
          if (fail) return Promise.reject(new Error("down"));
          stored.push(...outcomes);
          return Promise.resolve();
        },
      },
      registry,
    );
    expect(await store.lessonsCarriedTo("t", "l")).toEqual(["a"]);
    await store.recordApplied(
      "t",
      "e1",
      [
        { reflectionId: "a", result: "helped" },
        { reflectionId: "b", result: "helped" },
      ],
      new Date(),
    );
    await store.recordApplied("t", "e2", [{ reflectionId: "a", result: "failed_again" }], new Date());
    fail = true;
    await expect(
      store.recordApplied("t", "e3", [{ reflectionId: "a", result: "failed_again" }], new Date()),
    ).rejects.toThrow("down");
    const text = await registry.metrics();
    expect(text).toContain('reflector_lesson_applied_outcomes_total{result="helped"} 2');
    expect(text).toContain('reflector_lesson_applied_outcomes_total{result="failed_again"} 1');
    expect(stored).toHaveLength(3);
  });

  it("passes the retrieved lessons through when the store keeps them, and adds none when it does not", async () => {
    const base = { lessonsCarriedTo: () => Promise.resolve([]), recordApplied: () => Promise.resolve() };
    const at = new Date("2026-11-26T12:00:00Z");
    const asked: unknown[] = [];
    const keeping = countAppliedOutcomes(
      {
        ...base,
        lessonsRetrievedBy: (tenantId, loopId, when) => {
          asked.push([tenantId, loopId, when]);
          return Promise.resolve(["r1"]);
        },
      },
      new Registry(),
    );
    expect(await keeping.lessonsRetrievedBy?.("t", "loop-9", at)).toEqual(["r1"]);
    expect(asked).toEqual([["t", "loop-9", at]]);
    expect("lessonsRetrievedBy" in countAppliedOutcomes(base, new Registry())).toBe(false);
  });
});
