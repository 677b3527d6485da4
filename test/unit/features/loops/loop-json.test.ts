import { describe, expect, it } from "vitest";
import type { LoopDecision } from "../../../../src/domain/contracts/index.js";
import { defaultGuardrailConfig } from "../../../../src/domain/guardrails/guardrail-config.js";
import type { LoopStatus } from "../../../../src/domain/guardrails/loop-status.js";
import { guardrailsStatusJson, loopCompleteJson } from "../../../../src/features/loops/loop-json.js";
import { LoopCompleteBody } from "../../../../src/features/loops/loop-schemas.js";

const status = (over: Partial<LoopStatus>): LoopStatus => ({
  loopId: "l1_r2",
  rootLoopId: "l1",
  rerunCount: 2,
  maxReruns: 3,
  decision: "rerun",
  newLoopId: "l1_r3",
  biasEcho: false,
  repeatedTags: [],
  reflectionFatigue: 0.3,
  fatigueIncreased: true,
  forceFinalize: false,
  rerunReason: "alignment_threshold_not_met",
  rerunReasonDetail: "alignment 0.70 < 0.75",
  rerunTrigger: ["alignment"],
  overriddenBy: null,
  alignment: 0.7,
  drift: 0.2,
  outcome: "success",
  orchestratorPersona: null,
  reflectionPersona: "SAGE",
  decidedAt: "2026-12-05T00:00:00.000Z",
  ...over,
});

describe("loop completion", () => {
  it("refuses a reflection_status other than done, as the specification does", () => {
    expect(LoopCompleteBody.safeParse({ loop_id: "l1" }).success).toBe(true);
    expect(LoopCompleteBody.safeParse({ loop_id: "l1", reflection_status: "done" }).success).toBe(true);
    for (const status of ["failed", "pending", "DONE"]) {
      const parsed = LoopCompleteBody.safeParse({ loop_id: "l1", reflection_status: status });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toBe("Invalid reflection status. Must be 'done'.");
    }
  });

  it("names the reflection's persona as the orchestrator's when the orchestrator gives none", () => {
    const decision = {
      decision: "finalize",
      loopId: "l1",
      rootLoopId: "l1",
      newLoopId: null,
      reason: "thresholds_met",
      reasonDetail: "",
      triggers: [],
      rerunCount: 0,
      maxReruns: 3,
      forceFinalize: false,
      overriddenBy: null,
      alignment: 0.9,
      drift: 0.1,
      biasEcho: false,
      repeatedTags: [],
      fatigue: 0,
      fatigueIncreased: false,
      decidedAt: "2026-12-05T00:00:00.000Z",
    } as unknown as LoopDecision;
    const withReflectionOnly = LoopCompleteBody.parse({ loop_id: "l1", reflection_persona: "SAGE" });
    expect(
      loopCompleteJson(withReflectionOnly, decision, true, defaultGuardrailConfig).orchestrator_persona,
    ).toBe("SAGE");
    const both = LoopCompleteBody.parse({
      loop_id: "l1",
      reflection_persona: "SAGE",
      orchestrator_persona: "ORACLE",
    });
    expect(loopCompleteJson(both, decision, true, defaultGuardrailConfig).orchestrator_persona).toBe(
      "ORACLE",
    );
    expect(
      loopCompleteJson(LoopCompleteBody.parse({ loop_id: "l1" }), decision, true, defaultGuardrailConfig)
        .orchestrator_persona,
    ).toBeNull();
    const fatigued = { ...decision, fatigue: 0.6, fatigueIncreased: true, rerunCount: 3 } as LoopDecision;
    const json = loopCompleteJson(withReflectionOnly, fatigued, true, defaultGuardrailConfig);
    expect(json.reflection_result).toMatchObject({
      reflection_fatigue: 0.6,
      fatigue_increased: true,
      fatigue_threshold_exceeded: true,
      fatigue_critical_threshold: 0.5,
    });
    expect(json.decision_result).toMatchObject({ rerun_limit_reached: true });
  });
});

describe("guardrails status", () => {
  const json = (trace: LoopStatus) =>
    guardrailsStatusJson("l1_r2", trace, null, defaultGuardrailConfig).guardrails_status;

  it("says fatigue exceeded its threshold by the fatigue, whatever finalized the loop", () => {
    // Fatigue 0.6 but the rerun limit was what finalized it: the threshold is still exceeded.
    expect(json(status({ reflectionFatigue: 0.6, rerunReason: "max_reruns_reached" }))).toMatchObject({
      fatigue_threshold_exceeded: true,
      rerun_limit_reached: false,
    });
    expect(json(status({ reflectionFatigue: 0.5 })).fatigue_threshold_exceeded).toBe(true);
    expect(json(status({ reflectionFatigue: 0.45 })).fatigue_threshold_exceeded).toBe(false);
    // An override let the loop past its fatigue: exceeded all the same.
    expect(
      json(
        status({ reflectionFatigue: 0.75, rerunReason: "alignment_threshold_not_met", overriddenBy: "op" }),
      ).fatigue_threshold_exceeded,
    ).toBe(true);
  });

  it("says the rerun limit is reached when the reruns used reach the limit", () => {
    expect(json(status({ rerunCount: 3, maxReruns: 3 })).rerun_limit_reached).toBe(true);
    expect(json(status({ rerunCount: 2, maxReruns: 3 })).rerun_limit_reached).toBe(false);
  });

  it("exposes the thresholds each guardrail was compared with", () => {
    expect(json(status({}))).toMatchObject({
      fatigue_critical_threshold: 0.5,
      bias_repetition_threshold: 3,
      alignment_threshold: 0.75,
      drift_threshold: 0.25,
      fatigue_increased: true,
      orchestrator_persona: "SAGE",
      reflection_persona: "SAGE",
    });
  });
});
