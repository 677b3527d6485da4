import { z } from "zod";

/** Published on `loop.decision`: what the agent should do with the loop it just finished. */

export const Decision = z.enum(["rerun", "finalize", "halt"]);
export type Decision = z.infer<typeof Decision>;

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
});
export type LoopDecision = z.infer<typeof LoopDecisionV1>;
