import type { AppliedOutcomeStore } from "../../domain/feedback/applied-outcome.js";
import type { TaskCompleted } from "../../domain/contracts/index.js";
import { recordAppliedOutcomes, recordCommittedOutcomes } from "../lesson-outcomes.js";
import type {
  Clock,
  OutboundMessage,
  ReflectionLifecycle,
  SignatureIndex,
  StoredReflection,
} from "../ports.js";
import type { MemoryOutcome, PersistedState } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";

export interface AfterCommitDeps {
  index: Pick<SignatureIndex, "markProcessed">;
  timer: StageTimer;
  /** Whether the lessons a rerun carried helped (counted after the rerun commits); absent: not counted. */
  appliedOutcomes?: AppliedOutcomeStore;
  /** The reflection's named lifecycle (`reflection_stored`), logged; absent: not logged. */
  lifecycle?: ReflectionLifecycle;
}

/**
 * Stage "after commit", for an event this call committed: the cache learns that the event is
 * processed and what its signature's lesson now is, and a rerun's carried lessons are counted.
 * The cache is refreshed only after the transaction that made it true has committed. A merge
 * changed a lesson stored under another signature: that entry is left to expire, and the new
 * signature is read from Postgres the next time.
 */
export async function afterCommit(deps: AfterCommitDeps, state: PersistedState): Promise<PersistedState> {
  const { facts, memory, result, now } = state;
  const { event } = facts;
  const remembered = memory ? cachedAfterCommit(memory) : null;
  const occurrences = result.occurrences;
  const refreshed = remembered && occurrences !== null ? { ...remembered, occurrences } : null;
  const created = memory?.created;
  if (created && deps.lifecycle) {
    const subject = { tenantId: event.tenantId, projectId: event.projectId, eventId: event.eventId };
    deps.lifecycle.stored(
      { ...subject, loopId: event.loopId },
      { reflectionId: created.id, importance: created.reflection.importance },
    );
  }
  const applied = deps.appliedOutcomes;
  // Independent (the cache in Redis, the outcomes in Postgres): the event's outputs wait for the slower only.
  await Promise.all([
    deps.timer.time("index", () => deps.index.markProcessed(event.tenantId, event.eventId, refreshed)),
    applied
      ? deps.timer.time("lesson-outcomes", () => recordAppliedOutcomes(applied, event, memory, now))
      : null,
  ]);
  return state;
}

/**
 * For an event found committed before (by another record, or by this one before a crash that may
 * have come before its outcomes were counted): the lessons it applied are counted from the
 * outputs it committed. Counting is keyed by the event, so a second count changes nothing.
 */
export async function countCommittedOutcomes(
  deps: Pick<AfterCommitDeps, "timer" | "appliedOutcomes"> & { clock: Clock },
  event: TaskCompleted,
  outputs: OutboundMessage[],
): Promise<void> {
  const applied = deps.appliedOutcomes;
  if (applied)
    await deps.timer.time("lesson-outcomes", () =>
      recordCommittedOutcomes(applied, event, outputs, deps.clock.now()),
    );
}

/** What the signature's cache entry holds once the event's commit is in. */
export function cachedAfterCommit({ matched, created, rejudged }: MemoryOutcome): StoredReflection | null {
  if (matched.known) return { ...matched.known, signature: matched.candidate.signature, ...(rejudged ?? {}) };
  if (!created) return null;
  return {
    id: created.id,
    signature: matched.candidate.signature,
    reflection: created.reflection,
    verdict: created.verdict,
    qualityScore: created.qualityScore,
    metrics: created.metrics,
    violations: created.violations,
    generator: created.generator,
    attempts: created.attempts,
    occurrences: 1,
    sourceVector: created.sourceVector,
  };
}
