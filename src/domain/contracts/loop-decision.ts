import { z } from "zod";

/** Published on `loop.decision`: what the agent should do with the loop it just finished. */

export const Decision = z.enum(["rerun", "finalize", "halt"]);
export type Decision = z.infer<typeof Decision>;

/**
 * A lesson to apply on the rerun: the one written, merged or recalled for the failure this decision
 * is about. `prompt` is the lesson as one text ready to put into the agent's prompt.
 */
export const DecisionLesson = z.object({
  reflectionId: z.string(),
  strategyText: z.string(),
  adjustments: z.array(z.string()),
  prompt: z.string(),
});
export type DecisionLesson = z.infer<typeof DecisionLesson>;

export const LoopDecisionV1 = z.object({
  schemaVersion: z.literal(1),
  decisionId: z.string(),
  sourceEventId: z.string(),
  tenantId: z.string(),
  projectId: z.string(),
  loopId: z.string(),
  /** First loop of the rerun family. */
  rootLoopId: z.string(),
  decision: Decision,
  newLoopId: z.string().nullable(),
  rerunCount: z.number().int().min(0),
  maxReruns: z.number().int().min(0),
  reason: z.string(),
  reasonDetail: z.string(),
  triggers: z.array(z.string()),
  fatigue: z.number().min(0).max(1),
  fatigueIncreased: z.boolean(),
  biasEcho: z.boolean(),
  repeatedTags: z.array(z.string()),
  forceFinalize: z.boolean(),
  overriddenBy: z.string().nullable(),
  alignment: z.number().min(0).max(1).nullable(),
  drift: z.number().min(0).max(1).nullable(),
  decidedAt: z.iso.datetime({ offset: true }),
  /**
   * The lessons to apply on the next attempt: empty unless the decision is `rerun` and a lesson was
   * written or recalled for this failure. Added after the first release: older records have none.
   */
  // Not in the published JSON Schema (see `unpublishedFields`); checked here, on decode.
  lessons: z.array(DecisionLesson).default([]),
});
export type LoopDecision = z.infer<typeof LoopDecisionV1>;

/**
 * Fields the contract reads and writes but the published JSON Schema (`schemas/`, registered in
 * the schema registry) leaves out. The first release's schema leaves unknown fields open, so it
 * already admits them; adding them to it would be refused by a registry with BACKWARD
 * compatibility: Apicurio refuses any property added to an open schema ("property schemas
 * narrowed"), even one with no constraint. The schema stays as first registered; the field is
 * documented in docs/loops-and-maintenance.md.
 */
export const unpublishedFields: Readonly<Record<string, readonly string[]>> = {
  "loop-decision.v1": ["lessons"],
};
