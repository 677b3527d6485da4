import type { TaskCompleted } from "../domain/contracts/index.js";
import {
  appliedOutcomes,
  type AppliedOutcome,
  type AppliedOutcomeStore,
} from "../domain/feedback/applied-outcome.js";
import { lessonsOfMemory } from "./decision-message.js";
import type { MemoryOutcome } from "./processing-state.js";

/**
 * After a rerun's event has committed: did the lessons its parent's decision carried help? Counts
 * "helped" for each when the rerun succeeded, "failed again" for the one its failure was filed
 * under. Events that are not reruns, and reruns whose parent carried no lesson, cost nothing but
 * (for reruns) one read.
 */
export async function recordAppliedOutcomes(
  store: AppliedOutcomeStore,
  event: TaskCompleted,
  memoryOutcome: MemoryOutcome | null,
  now: Date,
): Promise<AppliedOutcome[]> {
  if (event.rerunOf === undefined) return [];
  const carried = await store.lessonsCarriedTo(event.tenantId, event.rerunOf);
  if (carried.length === 0) return [];
  const outcomes = appliedOutcomes({
    outcome: event.outcome,
    carried,
    filedUnder: lessonsOfMemory(memoryOutcome)[0]?.reflectionId ?? null,
  });
  await store.recordApplied(event.tenantId, event.eventId, outcomes, now);
  return outcomes;
}
