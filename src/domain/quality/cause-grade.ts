import type { QualityConfig } from "./quality-config.js";

/**
 * A model's reading of one analysis against its trace (the model judge): whether it states how a
 * specific step's content led to the failure, whether what it relies on is in the trace, and how
 * well it explains this run. The offline judge reads the same question from words; the model reads
 * it from meaning.
 */
export interface CauseGrade {
  /** The analysis states a causal claim about this run (not the outcome, not "unknown"). */
  statesCause: boolean;
  /** The steps, values and quotes it relies on are in the trace as it says. */
  grounded: boolean;
  /** 0–1: how well it explains this failure. */
  score: number;
  /** The model's one-sentence reason, shown in the depth violation. */
  reason: string;
}

/**
 * Depth from a model's grade, on the depth levels the offline judge uses, so storage rules read it
 * the same way: no stated cause is a symptom (the surface level, never stored); a cause the trace
 * does not bear out is below "what happened" (never stored either: it would teach agents something
 * that did not happen); a grounded cause is at least the "why" level, higher as the model rates it.
 */
export function depthFromGrade(grade: CauseGrade, depth: QualityConfig["depth"]): number {
  const { surface, shallow, medium, deep } = depth.levels;
  if (!grade.statesCause) return surface;
  if (!grade.grounded) return (surface + shallow) / 2;
  const score = Math.min(1, Math.max(0, grade.score));
  return Math.min(deep, Math.max(medium, medium + (deep - medium) * ((score - 0.5) * 2)));
}

/** The depth violation's detail when the model judged depth. */
export function gradeShortfall(grade: CauseGrade): string {
  const what = !grade.statesCause
    ? "states no cause of this failure"
    : !grade.grounded
      ? "relies on steps or values the trace does not hold"
      : "explains the failure only in part";
  const reason = grade.reason.trim().slice(0, 300);
  return `The model judge read that the analysis ${what}${reason ? `: ${reason}` : "."}`;
}
