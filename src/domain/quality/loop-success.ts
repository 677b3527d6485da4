import type { QualityConfig } from "./quality-config.js";
import type { ValidationResult } from "./validate-reflection.js";

/**
 * Whether the improvement loop succeeded (docs/specification.md#improvement-loop): its final
 * reflection meets every threshold a rewrite works towards — completeness, depth, actionability
 * and, where it is enforced, relevance — and is not quarantined. What may be left besides
 * (unproven patterns, a lesson close to a stored one) is a fact about the tenant's history, which no
 * rewrite changes. A loop that returns its best attempt with such a threshold unmet failed, whether
 * it used up its attempts or stopped because the storage rules keep the reflection already.
 */
export function improvementLoopSucceeded(
  validation: Pick<ValidationResult, "metrics" | "quarantined">,
  config: QualityConfig,
): boolean {
  const m = validation.metrics;
  return (
    (validation.quarantined?.length ?? 0) === 0 &&
    m.completeness >= config.completeness.minThreshold &&
    m.depthScore >= config.depth.minThreshold &&
    m.actionabilityScore >= config.actionability.minThreshold &&
    (config.depth.mode === "literal" || m.relevanceScore >= config.relevance.minThreshold)
  );
}
