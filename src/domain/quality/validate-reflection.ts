import type { QualityMetrics, Reflection, Verdict } from "../contracts/index.js";
import { assessDepth } from "./assess-depth.js";
import { checkCompleteness } from "./check-completeness.js";
import { patternValidity } from "./pattern-validity.js";
import type { QualityConfig } from "./quality-config.js";
import { scoreActionability } from "./score-actionability.js";

export interface QualityEvidence {
  /** Per pattern: matching episodes and episodes retrieved, counted from stored data. */
  patternEvidence: ReadonlyMap<string, { occurrences: number; total: number }>;
  /** Cosine similarity of the reflection and the task (relevance). */
  relevance: number;
  /** 1 − the highest similarity to the tenant's stored reflections. */
  novelty: number;
}

export interface ValidationResult {
  isValid: boolean;
  qualityScore: number;
  violations: string[];
  metrics: QualityMetrics;
  invalidPatterns: string[];
  missingFields: string[];
  /**
   * Whether a rewrite could fix any of the violations. Missing pattern evidence is a fact about
   * the tenant's history and closeness to stored lessons a fact about memory: asking the
   * generator again changes neither, so the improvement loop stops there.
   */
  retryable: boolean;
}

/** How a violation about a pattern without enough evidence begins (stored with the lesson). */
export const patternViolationPrefix = "Invalid pattern";

const clamp = (value: number) => Math.min(1, Math.max(0, value));
const round = (value: number) => Math.round(value * 1e4) / 1e4;
const fixed = (value: number) => value.toFixed(2);

/**
 * The quality validator (docs/specification.md#quality-metrics): completeness, depth,
 * actionability, pattern validity, relevance and novelty, each against its threshold, and the
 * weighted score. Relevance and novelty are enforced, not only measured: a reflection about another
 * task, or one that repeats a stored lesson, is what their thresholds exist to catch.
 */
export function validateReflection(
  reflection: Reflection,
  evidence: QualityEvidence,
  config: QualityConfig,
): ValidationResult {
  const violations: string[] = [];
  let retryable = false;

  const completeness = checkCompleteness(reflection, config.completeness);
  if (completeness.score < config.completeness.minThreshold) {
    retryable = true;
    violations.push(
      `Incomplete reflection: ${fixed(completeness.score)} < ${config.completeness.minThreshold}. ` +
        `Missing fields: ${completeness.missingFields.join(", ")}`,
    );
  }

  const depthScore = assessDepth(reflection.reflectionText, config.depth);
  if (depthScore < config.depth.minThreshold) {
    retryable = true;
    violations.push(
      `Shallow reflection: depth=${fixed(depthScore)} < ${config.depth.minThreshold}. ` +
        "Need root cause analysis, not just symptoms.",
    );
  }

  const actionabilityScore = scoreActionability(reflection.adjustments, config.actionability);
  if (actionabilityScore < config.actionability.minThreshold) {
    retryable = true;
    violations.push(
      `Not actionable: ${fixed(actionabilityScore)} < ${config.actionability.minThreshold}. ` +
        "Adjustments must be concrete and executable.",
    );
  }

  const invalidPatterns: string[] = [];
  const validities: number[] = [];
  for (const pattern of reflection.patterns) {
    const validity = patternValidity(
      evidence.patternEvidence.get(pattern) ?? { occurrences: 0, total: 0 },
      config.patternValidity.minOccurrences,
    );
    validities.push(validity);
    if (validity < config.patternValidity.minThreshold) {
      invalidPatterns.push(pattern);
      violations.push(
        `${patternViolationPrefix} '${pattern}': confidence=${fixed(validity)} < ${config.patternValidity.minThreshold}`,
      );
    }
  }

  const relevanceScore = clamp(evidence.relevance);
  if (relevanceScore < config.relevance.minThreshold) {
    retryable = true;
    violations.push(
      `Not relevant to the task: relevance=${fixed(relevanceScore)} < ${config.relevance.minThreshold}`,
    );
  }
  const noveltyScore = clamp(evidence.novelty);
  if (noveltyScore < config.novelty.minThreshold) {
    violations.push(`Nothing new: novelty=${fixed(noveltyScore)} < ${config.novelty.minThreshold}`);
  }

  const metrics: QualityMetrics = {
    completeness: completeness.score,
    depthScore: round(depthScore),
    actionabilityScore,
    patternValidity: validities.length
      ? round(validities.reduce((a, b) => a + b, 0) / validities.length)
      : null,
    relevanceScore: round(relevanceScore),
    noveltyScore: round(noveltyScore),
  };
  const w = config.weights;
  const qualityScore = round(
    metrics.completeness * w.completeness +
      metrics.depthScore * w.depthScore +
      metrics.actionabilityScore * w.actionabilityScore +
      metrics.relevanceScore * w.relevanceScore +
      metrics.noveltyScore * w.noveltyScore,
  );

  return {
    isValid: violations.length === 0,
    qualityScore,
    violations,
    metrics,
    invalidPatterns,
    missingFields: completeness.missingFields,
    retryable,
  };
}

/**
 * The verdict (docs/specification.md#verdict): valid → accepted; score < 0.5 → rejected; otherwise
 * accepted with warnings.
 */
export function decideVerdict(
  validation: Pick<ValidationResult, "isValid" | "qualityScore">,
  config: QualityConfig,
): Verdict {
  if (validation.isValid) return "accepted";
  if (validation.qualityScore < config.rejectBelow) return "rejected";
  return "accepted_with_warnings";
}

/** Storage has its own bar (quality ≥ 0.8 by default): docs/specification.md#storage-bar. */
export function shouldStore(verdict: Verdict, qualityScore: number, config: QualityConfig): boolean {
  return verdict !== "rejected" && qualityScore >= config.storageMinQuality;
}
