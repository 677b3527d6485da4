import type { QualityMetrics, Reflection, Verdict } from "../contracts/index.js";
import { assessDepth } from "./assess-depth.js";
import { depthFromGrade, gradeShortfall, type CauseGrade } from "./cause-grade.js";
import { checkCompleteness } from "./check-completeness.js";
import { assessGroundedDepth, depthShortfall, groundedRelevance } from "./grounded-depth.js";
import { patternValidity } from "./pattern-validity.js";
import type { QualityConfig } from "./quality-config.js";
import {
  refusedViolation,
  screenLesson,
  screenReflection,
  type RefusedInstruction,
} from "./lesson-screen.js";
import { lessonSpecificity } from "./lesson-specificity.js";
import { scoreActionability } from "./score-actionability.js";
import { textFacts, type TraceFacts } from "./trace-facts.js";

export interface QualityEvidence {
  /** Per pattern: matching episodes and episodes retrieved, counted from stored data. */
  patternEvidence: ReadonlyMap<string, { occurrences: number; total: number }>;
  /** Cosine similarity of the reflection and the task (relevance). */
  relevance: number;
  /** 1 − the highest similarity to the tenant's stored reflections. */
  novelty: number;
  /**
   * The trace the reflection is about, for the grounded reading of depth and actionability.
   * Absent or null there: nothing grounds the analysis (the literal reading ignores it).
   */
  trace?: TraceFacts | null;
  /**
   * Depth and actionability as judged when the lesson was written: a stored lesson judged again
   * for new pattern evidence keeps them (its trace is not the one at hand).
   */
  judged?: { depthScore: number; actionabilityScore: number };
  /**
   * A model's reading of whether the analysis states a cause of this run (the model judge, when
   * configured): it sets depth in place of the offline reading; null when it gave none.
   */
  causeGrade?: CauseGrade | null;
}

export interface ValidationResult {
  isValid: boolean;
  qualityScore: number;
  violations: string[];
  metrics: QualityMetrics;
  invalidPatterns: string[];
  missingFields: string[];
  /**
   * What the lesson carries that no lesson may (a URL, a shell command, a credential, an order to
   * agents): when any, the verdict is rejected whatever the score, the lesson is never stored and
   * it is not asked again.
   */
  quarantined?: string[];
  /**
   * The instructions the lesson screen refused (an address, a command, an order to agents…): the
   * lesson is judged, and stored, without them (`screenReflection` gives the lesson as judged).
   */
  refused?: RefusedInstruction[];
  /**
   * Whether a rewrite could fix any of the violations and is worth a call. Missing pattern evidence
   * is a fact about the tenant's history and closeness to stored lessons a fact about memory:
   * asking the generator again changes neither, so the improvement loop stops there. Nor is a
   * reflection that the storage rules keep already asked again, nor a quarantined one.
   */
  retryable: boolean;
}

/**
 * How the note about a pattern without enough evidence yet begins (stored with the lesson). A
 * proposed pattern is a hypothesis: the note keeps the verdict below `accepted` until the tenant's
 * episodes confirm it, but never blocks storage and is never retried.
 */
export const patternViolationPrefix = "Unproven pattern";
/** The same note as lessons stored before hypotheses were named so. */
const legacyPatternViolationPrefix = "Invalid pattern";

/** Whether a stored violation is an unproven-pattern note (which new evidence may lift). */
export function isPatternViolation(violation: string): boolean {
  return violation.startsWith(patternViolationPrefix) || violation.startsWith(legacyPatternViolationPrefix);
}

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
  offered: Reflection,
  evidence: QualityEvidence,
  config: QualityConfig,
): ValidationResult {
  // What the screen refuses is cut out, one instruction at a time, and the rest is judged.
  const { reflection, refused } = screenReflection(offered);
  const violations: string[] = refused.length > 0 ? [refusedViolation(refused)] : [];
  let retryable = false;

  // REFLECTOR_DEPTH_MODE=literal reads the whole of the quality rules as written (golden outcomes).
  const literal = config.depth.mode === "literal";
  const completeness = checkCompleteness(reflection, config.completeness, literal);
  if (completeness.score < config.completeness.minThreshold) {
    retryable = true;
    violations.push(
      `Incomplete reflection: ${fixed(completeness.score)} < ${config.completeness.minThreshold}. ` +
        `Missing fields: ${completeness.missingFields.join(", ")}`,
    );
  }

  const grounded = config.depth.mode === "grounded";
  const facts = grounded ? (evidence.trace ?? textFacts("")) : undefined;
  let depthScore: number;
  let depthDetail = "Need root cause analysis, not just symptoms.";
  let aboutThisRun = 0;
  if (evidence.judged) depthScore = evidence.judged.depthScore;
  else if (facts) {
    const depth = assessGroundedDepth(reflection.reflectionText, facts, config.depth, reflection.attribution);
    aboutThisRun = groundedRelevance(depth);
    const grade = evidence.causeGrade;
    // Both readings are necessary, neither sufficient: a cause the model reads must also be grounded
    // in the trace's own specifics, and grounding without a cause the model can read is no cause.
    depthScore = grade ? Math.min(depth.score, depthFromGrade(grade, config.depth)) : depth.score;
    depthDetail = `Need root cause analysis of this trace, not just symptoms. ${grade ? gradeShortfall(grade) : depthShortfall(depth)}`;
  } else depthScore = assessDepth(reflection.reflectionText, config.depth);
  if (depthScore < config.depth.minThreshold) {
    retryable = true;
    violations.push(
      `Shallow reflection: depth=${fixed(depthScore)} < ${config.depth.minThreshold}. ${depthDetail}`,
    );
  }

  // A lesson that names nothing of this failure but the tool and its arguments fits every failure
  // of that tool: for this one, none of its adjustments is an action (lesson-specificity.ts).
  const generic =
    !evidence.judged &&
    facts !== undefined &&
    facts.runText.trim() !== "" &&
    reflection.adjustments.length > 0 &&
    lessonSpecificity(reflection, facts).specifics.length === 0;
  const actionabilityScore = generic
    ? 0
    : (evidence.judged?.actionabilityScore ??
      scoreActionability(reflection.adjustments, config.actionability, facts));
  if (actionabilityScore < config.actionability.minThreshold) {
    retryable = true;
    violations.push(
      `Not actionable: ${fixed(actionabilityScore)} < ${config.actionability.minThreshold}. ` +
        (generic
          ? "A generic lesson: its strategy, adjustments and learning name nothing of this failure beyond its tools, agents and argument names (no value, quoted text, name or condition the run shows), so they would read the same for any failure of that tool."
          : facts
            ? "Adjustments must be concrete and executable, naming what to set or check for this kind of task."
            : "Adjustments must be concrete and executable."),
    );
  }

  const { invalidPatterns, validities } = judgePatterns(
    reflection.patterns,
    evidence,
    config,
    literal,
    violations,
  );

  // An analysis that explains this run with the run's own specifics is about this task, however
  // far an embedder puts its words from the task's (an airline refund and "book_reservation").
  // The literal reading weighs relevance and novelty but enforces neither, as the rules are written.
  const relevanceScore = clamp(Math.max(evidence.relevance, aboutThisRun));
  if (!literal && relevanceScore < config.relevance.minThreshold) {
    retryable = true;
    violations.push(
      `Not relevant to the task: relevance=${fixed(relevanceScore)} < ${config.relevance.minThreshold}`,
    );
  }
  const noveltyScore = clamp(evidence.novelty);
  if (!literal && noveltyScore < config.novelty.minThreshold) {
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
  const qualityScore = (literal ? (x: number) => x : round)(
    metrics.completeness * w.completeness +
      metrics.depthScore * w.depthScore +
      metrics.actionabilityScore * w.actionabilityScore +
      metrics.relevanceScore * w.relevanceScore +
      metrics.noveltyScore * w.noveltyScore,
  );

  // A quarantined lesson is final, not asked again: what the screen found came from the trace
  // (quoted links, commands, orders), so a rewrite of the same trace is another try for whatever
  // put it there, at a model call each; and a model that insists on a link writes it again.
  const quarantined = screenLesson(reflection);
  if (quarantined.length > 0) {
    violations.push(
      `Quarantined: the lesson carries ${quarantined.join(", ")}; it is rejected and not asked again. A lesson quotes the trace only as evidence in its analysis; its adjustments and learning are its own words.`,
    );
  }

  const isValid = violations.length === 0;
  // A reflection the storage rules keep already is not asked again: a rewrite would cost a model
  // call to lift a warning.
  const storable =
    storageProblem(
      decideVerdict({ isValid, qualityScore, quarantined }, config),
      { qualityScore, metrics, missingFields: completeness.missingFields },
      config,
    ) === null;
  return {
    isValid,
    qualityScore,
    violations,
    metrics,
    invalidPatterns,
    missingFields: completeness.missingFields,
    ...(quarantined.length > 0 ? { quarantined } : {}),
    ...(refused.length > 0 ? { refused } : {}),
    retryable: retryable && !storable && quarantined.length === 0,
  };
}

/** Each proposed pattern against the tenant's episodes; a note per pattern below the threshold. */
function judgePatterns(
  patterns: readonly string[],
  evidence: QualityEvidence,
  config: QualityConfig,
  literal: boolean,
  violations: string[],
): { invalidPatterns: string[]; validities: number[] } {
  const invalidPatterns: string[] = [];
  const validities: number[] = [];
  for (const pattern of patterns) {
    const validity = patternValidity(
      evidence.patternEvidence.get(pattern) ?? { occurrences: 0, total: 0 },
      config.patternValidity.minOccurrences,
    );
    validities.push(validity);
    if (validity < config.patternValidity.minThreshold) {
      invalidPatterns.push(pattern);
      if (literal) {
        violations.push(
          `${legacyPatternViolationPrefix} '${pattern}': confidence=${fixed(validity)} < ${config.patternValidity.minThreshold}`,
        );
        continue;
      }
      const seen = evidence.patternEvidence.get(pattern)?.occurrences ?? 0;
      violations.push(
        `${patternViolationPrefix} '${pattern}': confidence=${fixed(validity)} < ${config.patternValidity.minThreshold} ` +
          `(${String(seen)} matching episode${seen === 1 ? "" : "s"}, ${String(config.patternValidity.minOccurrences)} needed); ` +
          "a hypothesis until the tenant's episodes confirm it",
      );
    }
  }

  return { invalidPatterns, validities };
}

/**
 * The verdict (docs/specification.md#verdict): quarantined (a lesson no agent may be served) →
 * rejected; valid → accepted; score < 0.5 → rejected; otherwise accepted with warnings.
 */
export function decideVerdict(
  validation: Pick<ValidationResult, "isValid" | "qualityScore" | "quarantined">,
  config: QualityConfig,
): Verdict {
  if (validation.quarantined?.length) return "rejected";
  if (validation.isValid) return "accepted";
  if (validation.qualityScore < config.rejectBelow) return "rejected";
  return "accepted_with_warnings";
}

/**
 * Why a judged reflection is not worth storing, or null when it is: the storage rules that do not
 * depend on memory (docs/specification.md#storage-bar), the same as the pipeline's `decideStorage`
 * before it looks for a stored lesson to merge into. Rejected, a symptom (depth below the "what
 * happened" level), about another task (relevance below its threshold), missing a required part,
 * or below the storage bar. Unproven patterns are
 * not a reason: they are hypotheses.
 */
export function storageProblem(
  verdict: Verdict,
  validation: Pick<ValidationResult, "qualityScore" | "metrics" | "missingFields">,
  config: Pick<QualityConfig, "relevance" | "completeness" | "storageMinQuality" | "depth">,
): string | null {
  if (verdict === "rejected") return "rejected by the quality judge";
  // Read literally, storage asks only for the bar (memory's own rules still apply in the pipeline).
  if (config.depth.mode === "literal")
    return validation.qualityScore < config.storageMinQuality
      ? `quality ${validation.qualityScore.toFixed(2)} is below the storage minimum ${config.storageMinQuality}`
      : null;
  if (validation.metrics.depthScore < config.depth.levels.shallow)
    return `a symptom, not a lesson: depth ${validation.metrics.depthScore.toFixed(2)} is below the "what happened" level ${config.depth.levels.shallow}`;
  if (validation.metrics.relevanceScore < config.relevance.minThreshold)
    return `not about this task: relevance ${validation.metrics.relevanceScore.toFixed(2)} is below ${config.relevance.minThreshold}`;
  if (validation.metrics.completeness < config.completeness.minThreshold)
    return `incomplete: ${validation.missingFields.join(", ") || "required parts"} missing`;
  if (validation.qualityScore < config.storageMinQuality)
    return `quality ${validation.qualityScore.toFixed(2)} is below the storage minimum ${config.storageMinQuality}`;
  return null;
}

/** Storage has its own bar (quality ≥ 0.8 by default): docs/specification.md#storage-bar. */
export function shouldStore(
  verdict: Verdict,
  validation: Pick<ValidationResult, "qualityScore" | "metrics" | "missingFields">,
  config: Pick<QualityConfig, "relevance" | "completeness" | "storageMinQuality" | "depth">,
): boolean {
  return storageProblem(verdict, validation, config) === null;
}
