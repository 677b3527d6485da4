import type { TaskCompleted } from "../contracts/index.js";

export type EvaluationErrorType = "conflict" | "unverified_claim" | "factual_error" | "quality_improvement";

export interface EvaluationFinding {
  errorType: EvaluationErrorType;
  /** What was learned, in a fixed wording per kind; the signature is computed from it. */
  content: string;
  qualityDelta: number;
  /** A reflection from a finding is stored only when it changed the agent's behaviour. */
  changedBehaviour: boolean;
}

/** Quality gains at or below this are noise, not something to learn from. */
export const minQualityDelta = 0.1;

/**
 * A reflection from an evaluation (docs/specification.md#evaluator-findings): a contradicted claim
 * is a `conflict`, an unsupported one an `unverified_claim`, a critique that reports CONFLICTS (or
 * a refuted claim) a `factual_error`, and a revision that raised quality by more than 0.1 a
 * `quality_improvement`. Anything else is not worth a reflection of its own.
 */
export function findingFromEvaluation(
  event: Pick<TaskCompleted, "verificationResults" | "evaluation" | "scores">,
): EvaluationFinding | null {
  const results = event.verificationResults ?? [];
  const critique = event.evaluation?.critique ?? "";
  const before = event.scores?.qualityBefore;
  const after = event.scores?.qualityAfter;
  const qualityDelta = before !== undefined && after !== undefined ? after - before : 0;
  // Revised is what the agent says; without it, a changed quality score is the evidence.
  const changedBehaviour =
    event.evaluation?.revised ?? (before !== undefined && after !== undefined && after !== before);
  const finding = (errorType: EvaluationErrorType, content: string): EvaluationFinding => ({
    errorType,
    content,
    qualityDelta: Math.round(qualityDelta * 100) / 100,
    changedBehaviour,
  });

  const conflict = results.find((r) => r.status === "conflict");
  if (conflict) return finding("conflict", `Detected conflict: ${conflict.conflictReason ?? "Unknown"}`);
  const unverified = results.find((r) => r.status === "unverified");
  if (unverified)
    return finding(
      "unverified_claim",
      `Made unverified claim about: ${(unverified.claimText ?? "Unknown").slice(0, 100)}`,
    );
  const refuted = results.find((r) => r.status === "refuted");
  if (refuted)
    return finding("factual_error", `Refuted claim: ${(refuted.claimText ?? "Unknown").slice(0, 150)}`);
  if (critique.includes("CONFLICTS")) return finding("factual_error", critique.slice(0, 200));
  if (qualityDelta > minQualityDelta)
    return finding(
      "quality_improvement",
      `Quality improved by ${qualityDelta.toFixed(2)}: ${critique.slice(0, 150)}`,
    );
  return null;
}
