import { z } from "zod";

/** Published on `reflection.accepted` / `reflection.rejected` for every reflected task. */

export const Verdict = z.enum(["accepted", "accepted_with_warnings", "rejected"]);
export type Verdict = z.infer<typeof Verdict>;

export const GeneratorName = z.enum(["heuristic", "openai", "reused"]);
export type GeneratorName = z.infer<typeof GeneratorName>;

export const QualityMetrics = z.object({
  completeness: z.number().min(0).max(1),
  depthScore: z.number().min(0).max(1),
  actionabilityScore: z.number().min(0).max(1),
  patternValidity: z.number().min(0).max(1).nullable(),
  relevanceScore: z.number().min(0).max(1),
  noveltyScore: z.number().min(0).max(1),
});
export type QualityMetrics = z.infer<typeof QualityMetrics>;

export const Reflection = z.object({
  /** Root-cause analysis: what went wrong (or right) and why. */
  reflectionText: z.string(),
  /** The reusable rule for next time. */
  strategyText: z.string().nullable(),
  importance: z.number().min(0).max(1),
  confidence: z.number().min(0).max(1),
  tags: z.array(z.string()),
  errorCategory: z.string().nullable(),
  patterns: z.array(z.string()),
  adjustments: z.array(z.string()),
  learning: z.string(),
});
export type Reflection = z.infer<typeof Reflection>;

export const ReflectionOutcomeV1 = z.object({
  schemaVersion: z.literal(1),
  outcomeId: z.string(),
  sourceEventId: z.string(),
  tenantId: z.string(),
  projectId: z.string(),
  agentId: z.string(),
  loopId: z.string(),
  taskId: z.string(),
  verdict: Verdict,
  /** Set when the reflection is stored (new or the existing one it duplicates). */
  reflectionId: z.string().nullable(),
  stored: z.boolean(),
  signature: z.string(),
  deduplicated: z.boolean(),
  occurrences: z.number().int().min(1),
  metrics: QualityMetrics,
  qualityScore: z.number().min(0).max(1),
  violations: z.array(z.string()),
  attempts: z.number().int().min(0),
  generator: GeneratorName,
  reflection: Reflection,
  producedAt: z.iso.datetime({ offset: true }),
});
export type ReflectionOutcome = z.infer<typeof ReflectionOutcomeV1>;
