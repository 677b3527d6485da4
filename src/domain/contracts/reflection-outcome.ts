import { z } from "zod";
import { AnswerEvaluation } from "./answer-evaluation.js";

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

/**
 * Where a failed trace went wrong and who did it: the step (its `eventId` and position), the
 * agent that produced it and the tool it used, with how sure the generator is and why. Keys are
 * left out where they are unknown.
 */
export const Attribution = z.object({
  /** `eventId` of the trace step held responsible. */
  eventId: z.string().optional(),
  /** Zero-based position of that step in the task's `events`. */
  stepIndex: z.number().int().min(0).optional(),
  actor: z.string().optional(),
  toolName: z.string().optional(),
  confidence: z.number().min(0).max(1),
  /** A short quote or reason that points at the step. */
  evidence: z.string().optional(),
  /**
   * When the step is a call: what it did for which request (the tool, its arguments' shape and
   * the values the user stated). Two lessons whose calls differ here are different mistakes.
   */
  action: z.string().optional(),
});
export type Attribution = z.infer<typeof Attribution>;

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
  /** Failures only: the step and agent the failure is attributed to. */
  attribution: Attribution.optional(),
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
  /**
   * Why a non-rejected reflection was not stored (storage bar, or an evaluator finding that changed
   * nothing).
   */
  notStoredReason: z.string().nullable().optional(),
  /** The self-evaluation of the agent's answer, when the task carried a question and an answer. */
  answerEvaluation: AnswerEvaluation.nullable().optional(),
  /** What the agent's own evaluator found, when the signature rests on it. */
  evaluationFinding: z
    .object({
      errorType: z.enum(["conflict", "unverified_claim", "factual_error", "quality_improvement"]),
      qualityDelta: z.number(),
      changedBehaviour: z.boolean(),
    })
    .nullable()
    .optional(),
  /**
   * What memory did: `add` stored a new lesson; `reuse` recalled a stored one that fits this
   * trace (no generation); `update` / `noop` merged a new near-duplicate into a stored lesson
   * (replacing its text, or only counting the occurrence); `none` kept nothing. `similarity` is
   * the trace's closeness to the reused lesson's source, or the new lesson's to the one it joined;
   * `signatureLevel` says what the signature was computed from.
   */
  memory: z
    .object({
      action: z.enum(["add", "reuse", "update", "noop", "none"]),
      similarity: z.number().nullable(),
      signatureLevel: z.enum(["message", "step", "task"]),
    })
    .optional(),
  producedAt: z.iso.datetime({ offset: true }),
});
export type ReflectionOutcome = z.infer<typeof ReflectionOutcomeV1>;
