import { z } from "zod";
import {
  Decision,
  Verdict,
  type LoopDecision,
  type ReflectionOutcome,
} from "../../domain/contracts/index.js";
import type { OutboundMessage } from "../../pipeline/ports.js";

/**
 * `POST /api/v1/reflect`'s answer: the run's outcome as the pipeline committed it (the values of
 * its `reflection.accepted`/`rejected` and `loop.decision` messages), in snake_case.
 */

const unit = z.number().min(0).max(1);

const ReflectedLesson = z.object({
  reflection_text: z.string(),
  strategy_text: z.string().nullable(),
  learning: z.string(),
  importance: unit,
  confidence: unit,
  tags: z.array(z.string()),
  error_category: z.string().nullable(),
  patterns: z.array(z.string()),
  adjustments: z.array(z.string()),
  attribution: z
    .object({
      event_id: z.string().optional(),
      step_index: z.number().int().optional(),
      actor: z.string().optional(),
      tool_name: z.string().optional(),
      confidence: unit,
      evidence: z.string().optional(),
    })
    .nullable(),
});

const DecisionJson = z.object({
  decision_id: z.string(),
  decision: Decision,
  loop_id: z.string(),
  root_loop_id: z.string(),
  new_loop_id: z.string().nullable(),
  rerun_count: z.number().int(),
  max_reruns: z.number().int(),
  reason: z.string(),
  reason_detail: z.string(),
  triggers: z.array(z.string()),
  fatigue: unit,
  bias_echo: z.boolean(),
  force_finalize: z.boolean(),
  overridden_by: z.string().nullable(),
  decided_at: z.string(),
  lessons: z
    .array(
      z.object({
        reflection_id: z.string(),
        strategy_text: z.string(),
        adjustments: z.array(z.string()),
        prompt: z.string(),
      }),
    )
    .describe("the lessons a rerun should apply, each with a `prompt` framed as advice from past runs"),
});

export const ReflectAnswer = z
  .object({
    event_id: z.string(),
    loop_id: z.string(),
    status: z
      .enum(["processed", "replayed"])
      .describe(
        "`processed` by this call; `replayed`: reflected before (over HTTP or from Kafka), its stored outcome",
      ),
    verdict: Verdict.nullable().describe("null when the run was not reflected (REFLECTOR_MODE)"),
    reflection_id: z.string().nullable().describe("the stored lesson (new, merged into, or reused)"),
    stored: z.boolean(),
    deduplicated: z.boolean(),
    occurrences: z.number().int().nullable(),
    quality_score: unit.nullable(),
    signature: z.string().nullable(),
    memory: z
      .object({
        action: z.enum(["add", "reuse", "update", "noop", "none"]),
        similarity: z.number().nullable(),
        signature_level: z.enum(["message", "step", "task"]),
      })
      .nullable(),
    reflection: ReflectedLesson.nullable().describe(
      "the lesson written or recalled for the run; null when none",
    ),
    decision: DecisionJson.nullable().describe("the loop's decision, as published on loop.decision"),
  })
  .meta({ id: "ReflectOutcome" })
  .describe("the run's reflection, verdict and decision, as the pipeline committed and published them");

export const ReflectPending = z
  .object({
    event_id: z.string(),
    status: z.literal("pending"),
    detail: z.string(),
    outcome_url: z.string().describe("GET it for the outcome (404 until it is committed)"),
  })
  .meta({ id: "ReflectPending" })
  .describe(
    "the deadline (REFLECT_HTTP_TIMEOUT_MS) passed: the run goes on; fetch the outcome from `outcome_url` (or post the same run again) after `Retry-After` seconds",
  );

function attributionJson(attribution: Record<string, unknown> | undefined) {
  if (!attribution) return null;
  const keys = [
    ["eventId", "event_id"],
    ["stepIndex", "step_index"],
    ["actor", "actor"],
    ["toolName", "tool_name"],
    ["confidence", "confidence"],
    ["evidence", "evidence"],
  ] as const;
  return Object.fromEntries(
    keys.filter(([from]) => attribution[from] !== undefined).map(([from, to]) => [to, attribution[from]]),
  ) as z.output<typeof ReflectedLesson>["attribution"];
}

function decisionJson(d: LoopDecision): z.output<typeof DecisionJson> {
  return {
    decision_id: d.decisionId,
    decision: d.decision,
    loop_id: d.loopId,
    root_loop_id: d.rootLoopId,
    new_loop_id: d.newLoopId,
    rerun_count: d.rerunCount,
    max_reruns: d.maxReruns,
    reason: d.reason,
    reason_detail: d.reasonDetail,
    triggers: d.triggers,
    fatigue: d.fatigue,
    bias_echo: d.biasEcho,
    force_finalize: d.forceFinalize,
    overridden_by: d.overriddenBy,
    decided_at: d.decidedAt,
    // A decision stored before decisions carried lessons has none.
    lessons: ((d.lessons as LoopDecision["lessons"] | undefined) ?? []).map((l) => ({
      reflection_id: l.reflectionId,
      strategy_text: l.strategyText,
      adjustments: l.adjustments,
      prompt: l.prompt,
    })),
  };
}

/** The answer from the outputs the pipeline committed for the event. */
export function reflectJson(
  event: { eventId: string; loopId: string },
  status: "processed" | "replayed",
  outputs: readonly OutboundMessage[],
): z.output<typeof ReflectAnswer> {
  const o = outputs.find((m) => m.role !== "loopDecision")?.value as ReflectionOutcome | undefined;
  const d = outputs.find((m) => m.role === "loopDecision")?.value as LoopDecision | undefined;
  const r = o?.reflection;
  return {
    event_id: event.eventId,
    loop_id: event.loopId,
    status,
    verdict: o?.verdict ?? null,
    reflection_id: o?.reflectionId ?? null,
    stored: o?.stored ?? false,
    deduplicated: o?.deduplicated ?? false,
    occurrences: o?.occurrences ?? null,
    quality_score: o?.qualityScore ?? null,
    signature: o?.signature ?? null,
    memory: o?.memory
      ? {
          action: o.memory.action,
          similarity: o.memory.similarity,
          signature_level: o.memory.signatureLevel,
        }
      : null,
    reflection: r
      ? {
          reflection_text: r.reflectionText,
          strategy_text: r.strategyText,
          learning: r.learning,
          importance: r.importance,
          confidence: r.confidence,
          tags: r.tags,
          error_category: r.errorCategory,
          patterns: r.patterns,
          adjustments: r.adjustments,
          attribution: attributionJson(r.attribution),
        }
      : null,
    decision: d ? decisionJson(d) : null,
  };
}
