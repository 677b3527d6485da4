import type { LoopStatus, StoredOverride } from "../../domain/guardrails/loop-status.js";
import type { LoopDecision } from "../../domain/contracts/index.js";
import type { GuardrailConfig } from "../../domain/guardrails/guardrail-config.js";
import type { LoopCompleteBody } from "./loop-schemas.js";

/** The loops feature's answers, in snake_case shapes. */

/** The orchestrator's persona, else the reflection's (the specification's fallback), else null. */
export function orchestratorPersonaOf(given: {
  orchestrator_persona?: string | null | undefined;
  reflection_persona?: string | null | undefined;
}): string | null {
  return given.orchestrator_persona ?? given.reflection_persona ?? null;
}

export function loopCompleteJson(
  body: LoopCompleteBody,
  decision: LoopDecision,
  committed: boolean,
  guardrails: GuardrailConfig,
) {
  return {
    status: "success",
    loop_id: body.loop_id,
    replayed: !committed,
    reflection_result: {
      alignment_score: decision.alignment,
      drift_score: decision.drift,
      summary_valid: (body.outcome ?? "success") === "success",
      reflection_persona: body.reflection_persona ?? null,
      bias_echo: decision.biasEcho,
      repeated_tags: decision.repeatedTags,
      bias_repetition_threshold: guardrails.biasRepetitionThreshold,
      reflection_fatigue: decision.fatigue,
      fatigue_increased: decision.fatigueIncreased,
      fatigue_threshold_exceeded: decision.fatigue >= guardrails.fatigueCriticalThreshold,
      fatigue_critical_threshold: guardrails.fatigueCriticalThreshold,
    },
    decision_result: {
      decision: decision.decision,
      original_loop_id: decision.loopId,
      root_loop_id: decision.rootLoopId,
      new_loop_id: decision.newLoopId,
      rerun_reason: decision.reason,
      rerun_reason_detail: decision.reasonDetail,
      rerun_trigger: decision.triggers,
      rerun_number: decision.decision === "rerun" ? decision.rerunCount : null,
      rerun_count: decision.rerunCount,
      max_reruns: decision.maxReruns,
      rerun_limit_reached: decision.rerunCount >= decision.maxReruns,
      force_finalize: decision.forceFinalize,
      overridden_by: decision.overriddenBy,
    },
    orchestrator_persona: orchestratorPersonaOf(body),
    timestamp: decision.decidedAt,
  };
}

export function guardrailsStatusJson(
  loopId: string,
  trace: LoopStatus | null,
  override: StoredOverride | null,
  guardrails: GuardrailConfig,
) {
  return {
    status: "success",
    guardrails_status: {
      loop_id: loopId,
      root_loop_id: trace?.rootLoopId ?? null,
      decision: trace?.decision ?? null,
      new_loop_id: trace?.newLoopId ?? null,
      rerun_count: trace?.rerunCount ?? 0,
      max_reruns: trace?.maxReruns ?? null,
      rerun_limit_reached: trace ? trace.rerunCount >= trace.maxReruns : false,
      bias_echo: trace?.biasEcho ?? false,
      repeated_tags: trace?.repeatedTags ?? [],
      reflection_fatigue: trace?.reflectionFatigue ?? 0,
      fatigue_increased: trace?.fatigueIncreased ?? false,
      // As specified: the fatigue against the critical threshold, whatever finalized the loop and
      // whether or not an override let it past.
      fatigue_threshold_exceeded: trace
        ? trace.reflectionFatigue >= guardrails.fatigueCriticalThreshold
        : false,
      fatigue_critical_threshold: guardrails.fatigueCriticalThreshold,
      bias_repetition_threshold: guardrails.biasRepetitionThreshold,
      alignment_threshold: guardrails.alignmentThreshold,
      drift_threshold: guardrails.driftThreshold,
      force_finalize: trace?.forceFinalize ?? false,
      rerun_reason: trace?.rerunReason ?? null,
      rerun_reason_detail: trace?.rerunReasonDetail ?? null,
      rerun_trigger: trace?.rerunTrigger ?? [],
      alignment_score: trace?.alignment ?? null,
      drift_score: trace?.drift ?? null,
      summary_valid: trace ? trace.outcome === "success" : null,
      orchestrator_persona: trace
        ? orchestratorPersonaOf({
            orchestrator_persona: trace.orchestratorPersona,
            reflection_persona: trace.reflectionPersona,
          })
        : null,
      reflection_persona: trace?.reflectionPersona ?? null,
      overridden_by: trace?.overriddenBy ?? null,
      pending_override: override
        ? {
            override_fatigue: override.overrideFatigue,
            override_max_reruns: override.overrideMaxReruns,
            overridden_by: override.overriddenBy,
            override_reason: override.overrideReason,
          }
        : null,
      decided_at: trace?.decidedAt ?? null,
    },
  };
}

export function overrideJson(stored: StoredOverride) {
  return {
    status: "success",
    loop_id: stored.loopId,
    override_fatigue: stored.overrideFatigue,
    override_max_reruns: stored.overrideMaxReruns,
    overridden_by: stored.overriddenBy,
    override_reason: stored.overrideReason,
  };
}
