import { describe, expect, it } from "vitest";
import { runsPeriodicReflection, selectForReflection } from "../../../src/domain/select-for-reflection.js";

const task = (extra: {
  tier?: "inline" | "oracle-only" | "container-light" | "container-full";
  importance?: number;
}) => ({
  description: "answer a question",
  ...extra,
});

describe("selective reflection", () => {
  it("always reflects on failures", () => {
    for (const outcome of ["failure", "partial", "timeout", "error"] as const) {
      expect(selectForReflection({ outcome, task: task({ tier: "inline" }) }, "lite").reflect).toBe(true);
    }
  });
  it("skips inline and oracle-only successes, reflects on container-full or important ones", () => {
    expect(
      selectForReflection({ outcome: "success", task: task({ tier: "inline", importance: 0.9 }) }, "full")
        .reflect,
    ).toBe(false);
    expect(
      selectForReflection({ outcome: "success", task: task({ tier: "oracle-only" }) }, "full").reflect,
    ).toBe(false);
    expect(
      selectForReflection({ outcome: "success", task: task({ tier: "container-full" }) }, "full").reflect,
    ).toBe(true);
    expect(
      selectForReflection({ outcome: "success", task: task({ importance: 0.71 }) }, "full").reflect,
    ).toBe(true);
    expect(selectForReflection({ outcome: "success", task: task({ importance: 0.7 }) }, "full").reflect).toBe(
      false,
    );
  });
  it("never reflects on successes in lite mode", () => {
    expect(
      selectForReflection({ outcome: "success", task: task({ tier: "container-full" }) }, "lite").reflect,
    ).toBe(false);
  });
  it("runs periodic reflection (dreaming) in full mode only", () => {
    expect(runsPeriodicReflection("full")).toBe(true);
    expect(runsPeriodicReflection("lite")).toBe(false);
  });
});
