import { describe, expect, it } from "vitest";
import { decideLoop } from "../../../../src/domain/guardrails/decide-loop.js";
import { defaultGuardrailConfig as config } from "../../../../src/domain/guardrails/guardrail-config.js";
import { loopFamilyRoot, rerunDepthFromId } from "../../../../src/domain/guardrails/loop-family.js";
import { loopFamilyKey } from "../../../../src/adapters/kafka/ordered-scheduler.js";

const loops = [
  { loopId: "loop_001" },
  { loopId: "loop_001_r1", rerunOf: "loop_001" },
  { loopId: "loop_001_r2", rerunOf: "loop_001_r1" },
  { loopId: "retry", rerunOf: "loop_001_r2" },
  // Named like a rerun but not one: a root of its own family.
  { loopId: "loop_007_r3" },
];

describe("loop family", () => {
  it("roots a loop at itself, a rerun at its parent's id without the _r<n> suffix", () => {
    expect(loops.map(loopFamilyRoot)).toEqual([
      "loop_001",
      "loop_001",
      "loop_001",
      "loop_001",
      "loop_007_r3",
    ]);
    expect(loops.map(rerunDepthFromId)).toEqual([0, 1, 2, 1, 0]);
  });

  it("is the root decideLoop records and the consumer orders by, for every loop", () => {
    for (const loop of loops) {
      const decision = decideLoop(
        {
          event: { ...loop, outcome: "success" },
          previous: null,
          override: null,
          biasHistory: new Map(),
          answerNeedsRetry: false,
        },
        config,
      );
      expect(decision.rootLoopId).toBe(loopFamilyRoot(loop));
      expect(loopFamilyKey({ tenantId: "t", ...loop })).toBe(`t\u0000${loopFamilyRoot(loop)}`);
    }
  });
});
