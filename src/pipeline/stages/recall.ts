import { withOccurrences } from "../outcome-message.js";
import type { ProcessedEvent, ReflectionStore, SignatureIndex, StoredReflection } from "../ports.js";
import type { EventFacts } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";

export interface RecallDeps {
  store: Pick<ReflectionStore, "findProcessed">;
  index: Pick<SignatureIndex, "recall">;
  timer: StageTimer;
}

export interface Recalled {
  /** The event id's commit, when one is stored (Redis said so and Postgres agrees), its count applied. */
  processed: ProcessedEvent | null;
  /** The first signature's cached lesson, when the event is not processed yet. */
  cached: StoredReflection | null;
}

/**
 * Stage "recall": whether the event id is committed already, with the first signature's cached
 * lesson in the same Redis round trip. Redis is a cache: only Postgres says the event committed.
 */
export async function recall(deps: RecallDeps, facts: EventFacts): Promise<Recalled> {
  const { event, candidates } = facts;
  const recalled = await deps.timer.time("index", () =>
    deps.index.recall(event.tenantId, event.eventId, candidates[0]?.signature ?? null),
  );
  const stored = recalled.processed ? await deps.store.findProcessed(event.tenantId, event.eventId) : null;
  // Published again as after the commit: the stored outputs with the count stored beside them.
  const processed = stored && { ...stored, outputs: withOccurrences(stored.outputs, stored.occurrences) };
  return { processed, cached: recalled.cached };
}
