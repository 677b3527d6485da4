import type { TaskCompleted } from "../domain/contracts/index.js";
import {
  appliedOutcomes,
  type AppliedOutcome,
  type AppliedOutcomeStore,
} from "../domain/feedback/applied-outcome.js";
import { lessonsOfMemory } from "./decision-message.js";
import type { MemoryOutcome } from "./processing-state.js";

/**
 * After a task's event has committed: did the lessons it applied help? Those are the lessons its
 * parent's `rerun` decision carried (a rerun) and those `POST /api/v1/lessons/for-task` served for
 * its loop id before it ran (any task). Counts "helped" for each when the task succeeded, "failed
 * again" for the one its failure was filed under. Each event counts once (the store's
 * `lesson_outcomes` key), so a redelivered event moves nothing again. An event that applied no
 * lesson costs one read per source.
 */
export async function recordAppliedOutcomes(
  store: AppliedOutcomeStore,
  event: TaskCompleted,
  memoryOutcome: MemoryOutcome | null,
  now: Date,
): Promise<AppliedOutcome[]> {
  const [carried, retrieved] = await Promise.all([
    event.rerunOf === undefined ? [] : store.lessonsCarriedTo(event.tenantId, event.rerunOf),
    store.lessonsRetrievedBy ? store.lessonsRetrievedBy(event.tenantId, event.loopId, now) : [],
  ]);
  if (carried.length === 0 && retrieved.length === 0) return [];
  const outcomes = appliedOutcomes({
    outcome: event.outcome,
    carried: [...carried, ...retrieved],
    filedUnder: lessonsOfMemory(memoryOutcome)[0]?.reflectionId ?? null,
  });
  await store.recordApplied(event.tenantId, event.eventId, outcomes, now);
  return outcomes;
}
