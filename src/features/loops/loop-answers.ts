import { z } from "zod";
import { Decision } from "../../domain/contracts/index.js";

/**
 * The loops feature's answers as documented in the OpenAPI document (`loop-json.ts` builds them);
 * the response check of the tests holds every answer to these.
 */

const unit = z.number().min(0).max(1);

export const LoopCompleteAnswer = z
  .object({
    status: z.literal("success"),
    loop_id: z.string(),
    replayed: z.boolean().describe("true when this completion was decided before: the stored decision"),
    reflection_result: z.object({
      alignment_score: unit.nullable(),
      drift_score: unit.nullable(),
      summary_valid: z.boolean(),
      reflection_persona: z.string().nullable(),
      bias_echo: z.boolean(),
      repeated_tags: z.array(z.string()),
      bias_repetition_threshold: z.number(),
      reflection_fatigue: z.number(),
      fatigue_increased: z.boolean(),
      fatigue_threshold_exceeded: z.boolean(),
      fatigue_critical_threshold: z.number(),
    }),
    decision_result: z.object({
      decision: Decision,
      original_loop_id: z.string(),
      root_loop_id: z.string(),
      new_loop_id: z.string().nullable(),
      rerun_reason: z.string(),
      rerun_reason_detail: z.string(),
      rerun_trigger: z.array(z.string()),
      rerun_number: z.number().int().nullable(),
      rerun_count: z.number().int(),
      max_reruns: z.number().int(),
      rerun_limit_reached: z.boolean(),
      force_finalize: z.boolean(),
      overridden_by: z.string().nullable(),
    }),
    orchestrator_persona: z.string().nullable(),
    timestamp: z.string().describe("when the decision was made (ISO 8601)"),
  })
  .meta({ id: "LoopCompletion" })
  .describe("the decision, as published on loop.decision");

const PendingOverride = z.object({
  override_fatigue: z.boolean(),
  override_max_reruns: z.boolean(),
  overridden_by: z.string().nullable(),
  override_reason: z.string().nullable(),
});

export const GuardrailsStatusAnswer = z
  .object({
    status: z.literal("success"),
    guardrails_status: z.object({
      loop_id: z.string(),
      root_loop_id: z.string().nullable(),
      decision: z.string().nullable(),
      new_loop_id: z.string().nullable(),
      rerun_count: z.number().int(),
      max_reruns: z.number().int().nullable(),
      rerun_limit_reached: z.boolean(),
      bias_echo: z.boolean(),
      repeated_tags: z.array(z.string()),
      reflection_fatigue: z.number(),
      fatigue_increased: z.boolean(),
      fatigue_threshold_exceeded: z.boolean(),
      fatigue_critical_threshold: z.number(),
      bias_repetition_threshold: z.number(),
      alignment_threshold: z.number(),
      drift_threshold: z.number(),
      force_finalize: z.boolean(),
      rerun_reason: z.string().nullable(),
      rerun_reason_detail: z.string().nullable(),
      rerun_trigger: z.array(z.string()),
      alignment_score: unit.nullable(),
      drift_score: unit.nullable(),
      summary_valid: z.boolean().nullable(),
      orchestrator_persona: z.string().nullable(),
      reflection_persona: z.string().nullable(),
      overridden_by: z.string().nullable(),
      pending_override: PendingOverride.nullable(),
      decided_at: z.string().nullable(),
    }),
  })
  .meta({ id: "GuardrailsStatus" })
  .describe("the loop's guardrails status");

export const OverrideAnswer = z
  .object({
    status: z.literal("success"),
    loop_id: z.string(),
    ...PendingOverride.shape,
  })
  .meta({ id: "GuardrailsOverride" })
  .describe("the stored override");
