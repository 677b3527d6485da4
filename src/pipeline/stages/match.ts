import { cosineSimilarity } from "../../domain/embedding/hashing-embedding.js";
import { sameAction, sameRequest } from "../../domain/memory/action-key.js";
import type { MemoryConfig } from "../../domain/memory/memory-config.js";
import { sameCause } from "../../domain/memory/same-lesson.js";
import { traceText } from "../../domain/memory/trace-text.js";
import type { Embedder, ReflectionStore, SignatureIndex, StoredReflection } from "../ports.js";
import type { EventState, Match, MatchedState } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";

export interface MatchDeps {
  store: Pick<ReflectionStore, "findBySignature">;
  index: Pick<SignatureIndex, "cached" | "remember">;
  embedder: Embedder;
  timer: StageTimer;
  memory: MemoryConfig;
}

/** The lesson of a signature: Redis first (unless it was just asked), then Postgres. */
async function lookUp(
  deps: MatchDeps,
  tenantId: string,
  signature: string,
  cacheAsked: boolean,
): Promise<StoredReflection | null> {
  const { store, index, timer } = deps;
  const cached = cacheAsked ? null : await timer.time("index", () => index.cached(tenantId, signature));
  if (cached) return cached;
  const stored = await timer.time("store-read", () => store.findBySignature(tenantId, signature));
  // Redis was cold or lost: warm it from the truth, under the signature it was found by.
  if (stored) await index.remember(tenantId, { ...stored, signature });
  return stored;
}

/**
 * Stage "match": the first signature whose stored lesson fits the trace (reuse), or the first
 * one with no lesson yet (a new reflection). A lesson fits when the trace is close to the trace
 * it was written for; one that does not fit sends the trace to a more specific signature. Null
 * when the event is filed under no signature (it is not reflected on).
 */
export async function match(deps: MatchDeps, state: EventState): Promise<MatchedState | null> {
  const { facts, cached } = state;
  const { event, candidates, failingStep } = facts;
  if (candidates.length === 0) return null;
  // The trace is embedded for matching; the task only when a new lesson is judged (relevance).
  const [traceVector] = await deps.timer.time("embed", () =>
    deps.embedder.embed([traceText(event, failingStep)], event.tenantId),
  );
  if (!traceVector) throw new Error("embedder returned no vector");
  let last: Match | null = null;
  for (const [i, candidate] of candidates.entries()) {
    // The first signature's cache entry came with the processed check.
    const known =
      (i === 0 ? cached : null) ?? (await lookUp(deps, event.tenantId, candidate.signature, i === 0));
    if (!known) return { ...state, traceVector, matched: { candidate, known: null, similarity: null } };
    const source = known.sourceVector;
    const similarity = source?.length === traceVector.length ? cosineSimilarity(traceVector, source) : null;
    last = { candidate, known, similarity };
    // A lesson written for a call fits only the same action (tool, argument shape, the user's
    // identifiers): alike traces of another user's request, of another call, or of a run whose
    // failing step is no call at all, are not it.
    const knownAction = known.reflection.attribution?.action;
    const sameCall = !knownAction || (facts.action !== null && sameAction(knownAction, facts.action));
    // A lesson of a failure is reused only for the same cause: the same kind of step going wrong
    // (the same agent, tool and action, found on evidence), not because the signature matched.
    const causeKnown =
      event.outcome === "success" ||
      sameCause(
        known.reflection.attribution,
        facts.located,
        knownAction !== undefined && facts.action !== null && sameRequest(knownAction, facts.action),
      );
    if (similarity !== null && similarity >= deps.memory.reuseMinSimilarity && sameCall && causeKnown)
      return { ...state, traceVector, matched: last };
  }
  // Even the task-level signature is taken: the same task failing at the same step again.
  return last ? { ...state, traceVector, matched: last } : null;
}
