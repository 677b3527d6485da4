import { describe, expect, it } from "vitest";
import {
  decideLoop,
  type LoopDecisionInput,
  type PreviousLoop,
} from "../../../../src/domain/guardrails/decide-loop.js";
import { defaultGuardrailConfig as config } from "../../../../src/domain/guardrails/guardrail-config.js";

type InputOverrides = Partial<Omit<LoopDecisionInput, "event">> & {
  event?: Partial<LoopDecisionInput["event"]>;
};

function input(overrides: InputOverrides = {}): LoopDecisionInput {
  return {
    previous: null,
    override: null,
    biasHistory: new Map(),
    answerNeedsRetry: false,
    ...overrides,
    event: { loopId: "loop_001", outcome: "partial", ...overrides.event },
  };
}

const prev = (p: Partial<PreviousLoop>): PreviousLoop => ({
  rootLoopId: "loop_001",
  rerunDepth: 0,
  maxReruns: 3,
  alignment: 0.6,
  drift: 0.4,
  fatigue: 0,
  ...p,
});

describe("decideLoop", () => {
  it("reruns loop_001 (alignment 0.72, drift 0.28) as loop_001_r1", () => {
    const result = decideLoop(input({ event: { scores: { alignment: 0.72, drift: 0.28 } } }), config);
    expect(result).toMatchObject({
      decision: "rerun",
      newLoopId: "loop_001_r1",
      reason: "alignment_threshold_not_met",
      rerunCount: 1,
      maxReruns: 3,
      triggers: ["alignment", "drift"],
      fatigue: 0,
      forceFinalize: false,
    });
  });

  it("finalizes when alignment >= 0.75 and drift <= 0.25", () => {
    const result = decideLoop(input({ event: { scores: { alignment: 0.75, drift: 0.25 } } }), config);
    expect(result).toMatchObject({
      decision: "finalize",
      reason: "thresholds_met",
      newLoopId: null,
      triggers: [],
    });
  });

  it("reruns a failed task that carries no scores, and finalizes a success", () => {
    expect(decideLoop(input({ event: { outcome: "timeout" } }), config)).toMatchObject({
      decision: "rerun",
      reason: "task_failed",
      triggers: ["outcome"],
    });
    expect(decideLoop(input({ event: { outcome: "success" } }), config)).toMatchObject({
      decision: "finalize",
    });
  });

  it("adds 0.15 fatigue when a rerun improves neither score by 0.05, and takes 0.05 off when it does", () => {
    const stale = decideLoop(
      input({
        event: { loopId: "loop_001_r1", rerunOf: "loop_001", scores: { alignment: 0.62, drift: 0.38 } },
        previous: prev({ fatigue: 0.1 }),
      }),
      config,
    );
    expect(stale).toMatchObject({
      fatigue: 0.25,
      fatigueIncreased: true,
      decision: "rerun",
      newLoopId: "loop_001_r2",
      rerunCount: 2,
    });

    const better = decideLoop(
      input({
        event: { loopId: "loop_001_r1", rerunOf: "loop_001", scores: { alignment: 0.66, drift: 0.4 } },
        previous: prev({ fatigue: 0.1 }),
      }),
      config,
    );
    expect(better).toMatchObject({ fatigue: 0.05, fatigueIncreased: false });

    const floor = decideLoop(
      input({
        event: { loopId: "loop_001_r1", rerunOf: "loop_001", scores: { alignment: 0.7, drift: 0.3 } },
        previous: prev({ fatigue: 0 }),
      }),
      config,
    );
    expect(floor.fatigue).toBe(0);
  });

  it("forces finalization at fatigue 0.5 unless fatigue is overridden", () => {
    const tired = input({
      event: { loopId: "loop_001_r2", rerunOf: "loop_001_r1", scores: { alignment: 0.6, drift: 0.4 } },
      previous: prev({ rerunDepth: 1, fatigue: 0.35 }),
    });
    expect(decideLoop(tired, config)).toMatchObject({
      decision: "finalize",
      reason: "reflection_fatigue",
      forceFinalize: true,
      fatigue: 0.5,
    });
    const overridden = decideLoop(
      { ...tired, override: { overrideFatigue: true, overrideMaxReruns: false, overriddenBy: "operator" } },
      config,
    );
    expect(overridden).toMatchObject({
      decision: "rerun",
      overriddenBy: "operator",
      newLoopId: "loop_001_r3",
    });
  });

  it("stops at the rerun limit of the family unless the limit is overridden", () => {
    const third = input({
      event: { loopId: "loop_001_r3", rerunOf: "loop_001_r2", scores: { alignment: 0.7, drift: 0.3 } },
      previous: prev({ rerunDepth: 2, alignment: 0.6, drift: 0.35 }),
    });
    expect(decideLoop(third, config)).toMatchObject({
      decision: "finalize",
      reason: "max_reruns_reached",
      forceFinalize: true,
      rerunCount: 3,
    });
    const overridden = decideLoop(
      { ...third, override: { overrideFatigue: false, overrideMaxReruns: true, overriddenBy: "sre" } },
      config,
    );
    expect(overridden).toMatchObject({
      decision: "rerun",
      newLoopId: "loop_001_r4",
      rerunCount: 4,
      overriddenBy: "sre",
    });
  });

  it("halts on bias echo when a tag reaches 3 recorded occurrences, even with overrides", () => {
    const echo = decideLoop(
      input({
        event: {
          biasTags: [{ tag: "recency_bias" }, { tag: "anchoring" }],
          scores: { alignment: 0.5, drift: 0.5 },
        },
        biasHistory: new Map([["recency_bias", 2]]),
        override: { overrideFatigue: true, overrideMaxReruns: true, overriddenBy: "x" },
      }),
      config,
    );
    expect(echo).toMatchObject({
      decision: "halt",
      reason: "bias_echo_detected",
      biasEcho: true,
      repeatedTags: ["recency_bias"],
    });
    expect(echo.biasCounts).toEqual(
      new Map([
        ["recency_bias", 3],
        ["anchoring", 1],
      ]),
    );
    const notYet = decideLoop(
      input({ event: { biasTags: [{ tag: "recency_bias" }] }, biasHistory: new Map([["recency_bias", 1]]) }),
      config,
    );
    expect(notYet.biasEcho).toBe(false);
  });

  it("derives lineage from the ids when the parent's trace is unknown", () => {
    const orphan = decideLoop(
      input({ event: { loopId: "loop_009_r2", rerunOf: "loop_009_r1", outcome: "failure" } }),
      config,
    );
    expect(orphan).toMatchObject({
      rootLoopId: "loop_009",
      decision: "rerun",
      newLoopId: "loop_009_r3",
      rerunCount: 3,
    });
  });

  it("counts a gain of exactly 0.05 as an improvement despite floating point (0.75 - 0.70)", () => {
    // 0.75 - 0.7 is 0.04999999999999993 in binary floating point; the rule is >= 0.05.
    const result = decideLoop(
      input({
        event: { loopId: "loop_001_r1", rerunOf: "loop_001", scores: { alignment: 0.75, drift: 0.3 } },
        previous: prev({ alignment: 0.7, drift: 0.3, fatigue: 0.15 }),
      }),
      config,
    );
    expect(result).toMatchObject({ fatigueIncreased: false, fatigue: 0.1 });
    const driftOnly = decideLoop(
      input({
        event: { loopId: "loop_001_r1", rerunOf: "loop_001", scores: { alignment: 0.6, drift: 0.25 } },
        previous: prev({ alignment: 0.6, drift: 0.3, fatigue: 0.15 }),
      }),
      config,
    );
    expect(driftOnly).toMatchObject({ fatigueIncreased: false, fatigue: 0.1 });
    const justShort = decideLoop(
      input({
        event: { loopId: "loop_001_r1", rerunOf: "loop_001", scores: { alignment: 0.74, drift: 0.3 } },
        previous: prev({ alignment: 0.7, drift: 0.3, fatigue: 0.15 }),
      }),
      config,
    );
    expect(justShort).toMatchObject({ fatigueIncreased: true, fatigue: 0.3 });
  });

  it("walks the default fatigue sequence 0.15, 0.30, 0.45, 0.60 and clamps at 1", () => {
    let fatigue = 0;
    const seen: number[] = [];
    for (let depth = 0; depth < 4; depth += 1) {
      const result = decideLoop(
        input({
          event: {
            loopId: `loop_001_r${String(depth + 1)}`,
            rerunOf: depth === 0 ? "loop_001" : `loop_001_r${String(depth)}`,
            scores: { alignment: 0.6, drift: 0.4 },
          },
          previous: prev({ rerunDepth: depth, maxReruns: 10, alignment: 0.6, drift: 0.4, fatigue }),
        }),
        config,
      );
      fatigue = result.fatigue;
      seen.push(fatigue);
    }
    expect(seen).toEqual([0.15, 0.3, 0.45, 0.6]);
    const capped = decideLoop(
      input({
        event: { loopId: "loop_001_r2", rerunOf: "loop_001_r1", scores: { alignment: 0.6, drift: 0.4 } },
        previous: prev({ rerunDepth: 1, fatigue: 0.95 }),
      }),
      config,
    );
    expect(capped.fatigue).toBe(1);
  });

  it("counts the family's reruns, not only the depth, against the limit", () => {
    // loop_001 was rerun as loop_001_r1 and loop_001_r2 (siblings); a third rerun is the last.
    const sibling = decideLoop(
      input({
        event: { loopId: "loop_001_r3", rerunOf: "loop_001", scores: { alignment: 0.6, drift: 0.4 } },
        previous: prev({ rerunDepth: 0 }),
        familyReruns: 2,
      }),
      config,
    );
    expect(sibling).toMatchObject({
      rerunDepth: 1,
      rerunCount: 3,
      decision: "finalize",
      reason: "max_reruns_reached",
    });
  });

  it("counts a bias tag listed twice in one event once, as the store does", () => {
    const result = decideLoop(
      input({
        event: { biasTags: [{ tag: "anchoring" }, { tag: "anchoring" }] },
        biasHistory: new Map([["anchoring", 1]]),
      }),
      config,
    );
    expect(result.biasCounts).toEqual(new Map([["anchoring", 2]]));
    expect(result.biasEcho).toBe(false);
  });

  it("says in the reasoning which guardrail an override let the rerun pass", () => {
    const result = decideLoop(
      input({
        event: { loopId: "loop_001_r3", rerunOf: "loop_001_r2", scores: { alignment: 0.6, drift: 0.4 } },
        previous: prev({ rerunDepth: 2, alignment: 0.6, drift: 0.4, fatigue: 0.45 }),
        override: { overrideFatigue: true, overrideMaxReruns: true, overriddenBy: "operator" },
      }),
      config,
    );
    expect(result).toMatchObject({ decision: "rerun", newLoopId: "loop_001_r4", overriddenBy: "operator" });
    expect(result.reasonDetail).toContain("rerun limit 3 overridden by operator");
    expect(result.reasonDetail).toContain("fatigue 0.6 >= 0.5 overridden by operator");
  });
});
