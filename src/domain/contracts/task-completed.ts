import { z } from "zod";
import { cutMiddle, traceStepTextMaxChars } from "./cut-text.js";

/** What an agent publishes on `agent.task.completed` (key: `loopId`) after each task. */

const nonEmpty = z.string().trim().min(1);
const unitScore = z.number().min(0).max(1);

export const Outcome = z.enum(["success", "failure", "partial", "timeout", "error"]);
export type Outcome = z.infer<typeof Outcome>;

export const TraceEventType = z.enum([
  "tool_call",
  "tool_response",
  "llm_call",
  "llm_response",
  "error_event",
  "system_event",
]);
export type TraceEventType = z.infer<typeof TraceEventType>;

/**
 * Text of one trace step: any length is accepted, and text longer than the per-step limit is cut
 * in the middle with a visible marker (see cut-text.ts) instead of failing the whole event.
 */
const stepText = z
  .string()
  .describe(
    `Longer than ${String(traceStepTextMaxChars)} characters is accepted and cut in the middle: head and tail are kept around a "…[cut N characters]…" marker.`,
  )
  .transform((text) => cutMiddle(text, traceStepTextMaxChars));

export const TraceEvent = z.object({
  eventId: nonEmpty,
  type: TraceEventType,
  timestamp: z.iso.datetime({ offset: true }),
  content: stepText,
  toolName: nonEmpty.optional(),
  /** The agent or role that produced the step, in a multi-agent system (e.g. `planner`, `WebSurfer`). */
  actor: nonEmpty.max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  error: z
    .object({
      message: stepText.optional(),
      code: z.string().optional(),
    })
    .catchall(z.unknown())
    .optional(),
});
export type TraceEvent = z.infer<typeof TraceEvent>;

export const TaskError = z.object({
  /** Broad family, e.g. `timeout_error`, `tool_error`, `validation_error`. */
  category: nonEmpty,
  /** Narrower type used in the error signature when present. */
  type: nonEmpty.optional(),
  message: z.string().min(1).max(16_000),
  code: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
});
export type TaskError = z.infer<typeof TaskError>;

export const TaskTier = z.enum(["inline", "oracle-only", "container-light", "container-full"]);

export const TaskCompletedV1 = z
  .object({
    schemaVersion: z.literal(1),
    eventId: nonEmpty.max(200),
    tenantId: nonEmpty.max(200),
    projectId: nonEmpty.max(200),
    agentId: nonEmpty.max(200),
    sessionId: nonEmpty.max(200).optional(),
    taskId: nonEmpty.max(200),
    loopId: nonEmpty.max(200),
    rerunOf: nonEmpty.max(200).optional(),
    occurredAt: z.iso.datetime({ offset: true }),
    task: z.object({
      description: z.string().trim().min(1).max(16_000),
      goal: z.string().max(16_000).optional(),
      query: z.string().max(64_000).optional(),
      answer: z.string().max(64_000).optional(),
      tier: TaskTier.optional(),
      importance: unitScore.optional(),
    }),
    outcome: Outcome,
    error: TaskError.optional(),
    events: z.array(TraceEvent).max(2_000),
    scores: z
      .object({
        alignment: unitScore.optional(),
        drift: unitScore.optional(),
        qualityBefore: unitScore.optional(),
        qualityAfter: unitScore.optional(),
      })
      .optional(),
    biasTags: z
      .array(z.object({ tag: nonEmpty.max(100), severity: z.enum(["low", "medium", "high"]).optional() }))
      .max(100)
      .optional(),
    persona: z.object({ orchestrator: nonEmpty.optional(), reflection: nonEmpty.optional() }).optional(),
    verificationResults: z
      .array(
        z.object({
          status: z.enum(["verified", "unverified", "conflict", "refuted"]),
          claimText: z.string().optional(),
          conflictReason: z.string().optional(),
        }),
      )
      .max(500)
      .optional(),
    /** The agent's own evaluator pass (seed 003): its critique and whether it revised the answer. */
    evaluation: z
      .object({
        critique: z.string().max(16_000).optional(),
        iteration: z.number().int().min(0).optional(),
        revised: z.boolean().optional(),
      })
      .optional(),
  })
  .superRefine((event, ctx) => {
    if (event.rerunOf !== undefined && event.rerunOf === event.loopId) {
      ctx.addIssue({ code: "custom", path: ["rerunOf"], message: "a loop cannot rerun itself" });
    }
  });
export type TaskCompleted = z.infer<typeof TaskCompletedV1>;

export function isFailureOutcome(outcome: Outcome): boolean {
  return outcome !== "success";
}
