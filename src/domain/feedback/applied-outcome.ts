/**
 * Did a lesson help when it was applied? A `rerun` decision carries the lesson(s) for the failure
 * (`loop.decision.lessons`); the rerun's own completion says how it went. A rerun that succeeds
 * counts as "helped" for every lesson it carried; a rerun that fails again and is filed under one
 * of those lessons (the same failure, the same way) counts as "failed again" for that lesson. A
 * rerun that fails differently says nothing about the lesson and counts for none. A task that
 * retrieved lessons for itself (`POST /api/v1/lessons/for-task` with its loop id) counts the same
 * way for the lessons it retrieved.
 *
 * The counts move the effective quality (what serving and ranking use), with no human vote: a
 * lesson that keeps failing when applied is withheld, as a 👎 would withhold it; one that keeps
 * helping gains a little. A human 👍 given as the deciding vote outranks the counts (a person
 * judged the lesson good), and a 👎 still caps it.
 */
import type { Outcome } from "../contracts/index.js";
import { thumbsDownQualityCap, type Rating } from "./effective-quality.js";

export type AppliedResult = "helped" | "failed_again";

export interface AppliedOutcome {
  reflectionId: string;
  result: AppliedResult;
}

export const appliedOutcomeRules = {
  /** "Failed again" this many times, and at least twice as often as "helped": withheld. */
  withholdAfterFailures: 3,
  /** Each net helped (helped − failed again) moves the quality by this much… */
  stepPerNet: 0.02,
  /** …up to this much either way. */
  maxShift: 0.1,
};

/**
 * What a task's completion says about the lessons it applied: those the decision that asked for
 * this rerun carried, and those the task retrieved for itself before it started.
 */
export function appliedOutcomes(input: {
  outcome: Outcome;
  /** The lessons the task applied: carried by its rerun decision, or retrieved for its loop. */
  carried: readonly string[];
  /** The lesson memory filed this rerun's failure under; null when none (or a success). */
  filedUnder: string | null;
}): AppliedOutcome[] {
  const carried = [...new Set(input.carried)];
  if (input.outcome === "success") return carried.map((reflectionId) => ({ reflectionId, result: "helped" }));
  if (input.filedUnder !== null && carried.includes(input.filedUnder))
    return [{ reflectionId: input.filedUnder, result: "failed_again" }];
  return [];
}

/** The lesson keeps failing when applied: withheld without a human vote. */
export function keepsFailing(helped: number, failedAgain: number): boolean {
  return failedAgain >= appliedOutcomeRules.withholdAfterFailures && failedAgain >= 2 * helped;
}

/**
 * The effective quality once applied outcomes are counted, from the quality after votes
 * (`effectiveQuality` of effective-quality.ts) and the deciding vote.
 */
export function qualityAfterOutcomes(
  votedQuality: number,
  rating: Rating | null,
  helped: number,
  failedAgain: number,
): number {
  // No outcome yet: the vote rule's quality as it is.
  if (helped === 0 && failedAgain === 0) return votedQuality;
  if (rating !== "up" && keepsFailing(helped, failedAgain))
    return Math.min(votedQuality, thumbsDownQualityCap);
  const r = appliedOutcomeRules;
  const shift = Math.max(-r.maxShift, Math.min(r.maxShift, r.stepPerNet * (helped - failedAgain)));
  // A 👎 keeps its cap: helping reruns do not lift a lesson a person rated down.
  const ceiling = rating === "down" ? thumbsDownQualityCap : 1;
  return Math.round(Math.max(0, Math.min(ceiling, votedQuality + shift)) * 1000) / 1000;
}

/** Where applied outcomes are read and kept; implemented by `src/adapters/postgres/pg-feedback-store.ts`. */
export interface AppliedOutcomeStore {
  /** The lessons the decision about `loopId` carried (empty when none, or the loop is unknown). */
  lessonsCarriedTo(tenantId: string, loopId: string): Promise<string[]>;
  /**
   * The lessons `POST /api/v1/lessons/for-task` served for `loopId` (the task's own loop) within
   * their retention before `at`; they count as the lessons a rerun carries. Absent: not counted.
   */
  lessonsRetrievedBy?(tenantId: string, loopId: string, at: Date): Promise<string[]>;
  /**
   * Counts the outcomes of one event, once: a replay of the same event id counts nothing again.
   * Moves each lesson's counts and effective quality.
   */
  recordApplied(
    tenantId: string,
    eventId: string,
    outcomes: readonly AppliedOutcome[],
    at: Date,
  ): Promise<void>;
}
