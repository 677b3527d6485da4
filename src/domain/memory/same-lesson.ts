import { reportedBases, type AttributionBasis } from "../attribution/located-failure.js";
import type { Attribution } from "../contracts/index.js";
import { cosineSimilarity } from "../embedding/hashing-embedding.js";
import { sameAction } from "./action-key.js";

/** Who failed and with which tool, as a lesson's attribution names the failing step, and how sure it is. */
export type FailingStepIdentity = Pick<Attribution, "actor" | "toolName" | "action"> & {
  confidence?: number;
};

/**
 * Below this confidence an attribution is a guess (the last step before the answer, a repeated
 * step): it names no failing step firmly enough to keep two alike lessons apart.
 */
export const stepIdentityMinConfidence = 0.5;

function firm(step: FailingStepIdentity | null): FailingStepIdentity | null {
  return step && (step.confidence ?? 1) >= stepIdentityMinConfidence ? step : null;
}

/** A stored lesson of the tenant, as a merge candidate. */
export interface MergeCandidate {
  id: string;
  embedding: readonly number[];
  qualityScore: number;
  /** The failing step the stored lesson blames; null when it names none (successes, old lessons). */
  failingStep: FailingStepIdentity | null;
}

/** A name as written by a model or a trace: case and surrounding space do not matter. */
function nameKey(name: string | undefined): string | null {
  const key = name?.trim().toLowerCase();
  return key === undefined || key === "" ? null : key;
}

/**
 * Whether two lessons blame the same failing step: the same agent with the same tool (names
 * compared without regard to case) and, when both name the call's action, the same action. A lesson that names no failing step, or only guesses one
 * (confidence below `stepIdentityMinConfidence`), cannot contradict another, so it agrees with any.
 */
export function sameFailingStep(a: FailingStepIdentity | null, b: FailingStepIdentity | null): boolean {
  const x = firm(a);
  const y = firm(b);
  if (!x || !y) return true;
  if (nameKey(x.actor) !== nameKey(y.actor) || nameKey(x.toolName) !== nameKey(y.toolName)) return false;
  // Calls of one tool for different requests, or with other arguments, are different mistakes.
  return x.action === undefined || y.action === undefined || sameAction(x.action, y.action);
}

/**
 * The stored lesson a new one may be merged into: the most similar (by lesson embedding) of those
 * that blame the same failing step. Alike wording alone is not the same root cause: two failures
 * of one kind of task often read alike, yet one went wrong in the planner and the other in the
 * coder. Whether it is close enough to merge is the storage decision's.
 */
export function nearestSameLesson(
  lesson: { embedding: readonly number[]; failingStep: FailingStepIdentity | null },
  candidates: readonly MergeCandidate[],
): { id: string; similarity: number; qualityScore: number } | null {
  let nearest: { id: string; similarity: number; qualityScore: number } | null = null;
  for (const candidate of candidates) {
    if (candidate.embedding.length !== lesson.embedding.length) continue;
    if (!sameFailingStep(lesson.failingStep, candidate.failingStep)) continue;
    const similarity = cosineSimilarity(lesson.embedding, candidate.embedding);
    if (!nearest || similarity > nearest.similarity)
      nearest = { id: candidate.id, similarity, qualityScore: candidate.qualityScore };
  }
  return nearest;
}

/**
 * Whether a stored lesson may be reused for a new failure: the same cause, not only the same error
 * signature, tool or domain. Both must name their failing step on evidence (a fallback that ignores
 * the trace's content names no cause) firmly, and blame the same agent with the same tool (and the
 * same action). What the trace reports itself (an error event, the task's own error message) says
 * how the step went wrong, so that is enough there; a step found by inference (a first write)
 * says only where, so its lesson is reused only for the same request (`sameRequest`): the same
 * call for another user's request may have gone wrong another way.
 */
export function sameCause(
  stored: FailingStepIdentity | null | undefined,
  found: { basis: AttributionBasis; attribution: FailingStepIdentity } | null | undefined,
  sameRequest: boolean,
): boolean {
  if (!found || found.basis === "structural_fallback" || found.basis === "no_steps") return false;
  // The trace reports the error itself: the signature already says the same error on the same
  // tool; a stored lesson that names no tool cannot contradict it, one that names another does.
  // tool (the same step going wrong the same way); which agent a model says called it may differ.
  if (reportedBases.has(found.basis)) {
    const storedTool = nameKey(stored?.toolName);
    return storedTool === null || storedTool === nameKey(found.attribution.toolName);
  }
  const x = stored ? firm(stored) : null;
  const y = firm(found.attribution);
  return x !== null && y !== null && sameFailingStep(x, y) && sameRequest;
}
