import type { TaskCompleted } from "../domain/contracts/index.js";
import {
  appliedOutcomes,
  type AppliedOutcome,
  type AppliedOutcomeStore,
} from "../domain/feedback/applied-outcome.js";
import { lessonsOfMemory } from "./decision-message.js";
import type { OutboundMessage } from "./ports.js";
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
  return record(store, event, lessonsOfMemory(memoryOutcome)[0]?.reflectionId ?? null, now);
}

/**
 * The same, for an event found already committed (delivered again after a crash, or published
 * twice): its outcomes may not have been recorded before the crash, so they are recorded from the
 * outputs it committed; when they were, the store's key makes this a no-op. With
 * `recordAppliedOutcomes` after the commit, every committed event's outcomes are counted, once.
 */
export async function recordCommittedOutcomes(
  store: AppliedOutcomeStore,
  event: TaskCompleted,
  outputs: readonly OutboundMessage[],
  now: Date,
): Promise<AppliedOutcome[]> {
  return record(store, event, filedUnderOf(outputs), now);
}

/**
 * The lesson memory filed a committed event under, read from its reflection outcome: the lesson
 * it names when memory kept one (`stored`: written, merged into or recalled), as
 * `lessonsOfMemory` gives it before the commit.
 */
export function filedUnderOf(outputs: readonly OutboundMessage[]): string | null {
  for (const output of outputs) {
    if (output.role === "loopDecision") continue;
    const { reflectionId, stored } = output.value;
    if (stored === true && typeof reflectionId === "string") return reflectionId;
  }
  return null;
}

async function record(
  store: AppliedOutcomeStore,
  event: TaskCompleted,
  filedUnder: string | null,
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
    filedUnder,
  });
  await store.recordApplied(event.tenantId, event.eventId, outcomes, now);
  return outcomes;
}
