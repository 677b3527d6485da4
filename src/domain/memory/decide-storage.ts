import type { QualityMetrics, Verdict } from "../contracts/index.js";
import type { QualityConfig } from "../quality/quality-config.js";
import type { MemoryConfig } from "./memory-config.js";

/** What memory does with a newly judged reflection (the ADD / UPDATE / NOOP of memory systems). */
export type StorageDecision =
  /** Stored as a new lesson. */
  | { action: "add" }
  /** The same lesson is stored already; this one is better judged and replaces its text. */
  | { action: "update"; into: string; similarity: number }
  /** The same lesson is stored already and is at least as good: it only gains an occurrence. */
  | { action: "noop"; into: string; similarity: number }
  /** Not kept, and why. */
  | { action: "none"; reason: string };

export interface StorageInput {
  verdict: Verdict;
  qualityScore: number;
  metrics: QualityMetrics;
  missingFields: readonly string[];
  /** The agent's own evaluator finding the reflection rests on, when it does. */
  finding: { errorType: string; changedBehaviour: boolean } | null;
  /** The most similar stored lesson of the tenant. */
  nearest: { id: string; similarity: number; qualityScore: number } | null;
}

/**
 * Whether and how a newly judged reflection is kept. Rejected ones never are; nor, whatever
 * their score, ones whose analysis stays at the symptom (below the "what happened" depth level:
 * in the grounded reading, it names nothing of the run), ones about another task (below the relevance bar) or missing required parts:
 * a lesson recalled for the wrong failure, or half a lesson, does more harm than none. A finding
 * that changed nothing in the agent's behaviour is not worth keeping either. A lesson that is
 * the same as a stored one is merged into it, so one root cause has one lesson; otherwise it is
 * stored when its score reaches the storage bar.
 */
export function decideStorage(
  input: StorageInput,
  quality: Pick<QualityConfig, "relevance" | "completeness" | "storageMinQuality" | "depth">,
  memory: MemoryConfig,
): StorageDecision {
  if (input.verdict === "rejected") return { action: "none", reason: "rejected by the quality judge" };
  if (quality.depth.mode === "grounded" && input.metrics.depthScore < quality.depth.levels.shallow)
    return {
      action: "none",
      reason: `a symptom, not a lesson: depth ${input.metrics.depthScore.toFixed(2)} is below the "what happened" level ${quality.depth.levels.shallow}`,
    };
  if (input.finding && !input.finding.changedBehaviour)
    return {
      action: "none",
      reason: `the ${input.finding.errorType} finding did not change the agent's behaviour; only findings that did are kept`,
    };
  if (input.metrics.relevanceScore < quality.relevance.minThreshold)
    return {
      action: "none",
      reason: `not about this task: relevance ${input.metrics.relevanceScore.toFixed(2)} is below ${quality.relevance.minThreshold}`,
    };
  if (input.metrics.completeness < quality.completeness.minThreshold)
    return {
      action: "none",
      reason: `incomplete: ${input.missingFields.join(", ") || "required parts"} missing`,
    };
  const nearest = input.nearest;
  if (nearest && nearest.similarity >= memory.mergeMinSimilarity) {
    return input.qualityScore > nearest.qualityScore
      ? { action: "update", into: nearest.id, similarity: nearest.similarity }
      : { action: "noop", into: nearest.id, similarity: nearest.similarity };
  }
  if (input.qualityScore < quality.storageMinQuality)
    return {
      action: "none",
      reason: `quality ${input.qualityScore.toFixed(2)} is below the storage minimum ${quality.storageMinQuality}`,
    };
  return { action: "add" };
}
