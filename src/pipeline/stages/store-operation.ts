import { stableId } from "../../domain/stable-id.js";
import type { NewReflection, UnitOfWork } from "../ports.js";
import type { ReflectedState, RememberedState } from "../processing-state.js";

/**
 * Stage "store operation" (pure): the write a judged or recalled lesson makes, as the store
 * takes it, and the new reflection it inserts, if any. A recalled lesson counts one more
 * occurrence; a new one is inserted, merged into a near-duplicate, or not kept.
 */
export function storeOperation(state: ReflectedState): RememberedState {
  const { facts, matched, traceVector, judged, rejudged } = state;
  const remembered = (op: UnitOfWork["store"], created: NewReflection | null): RememberedState => ({
    ...state,
    memory: { matched, judged, rejudged, op, created },
  });
  if (matched.known) return remembered({ kind: "increment", reflectionId: matched.known.id, rejudged }, null);
  if (!judged || judged.verdict === "rejected" || judged.storage.action === "none")
    return remembered(null, null);
  const created: NewReflection = {
    id: stableId("reflection", facts.event.tenantId, matched.candidate.signature),
    signatureType: matched.candidate.errorType,
    reflection: judged.reflection,
    verdict: judged.verdict,
    qualityScore: judged.validation.qualityScore,
    metrics: judged.validation.metrics,
    violations: judged.validation.violations,
    generator: judged.generator,
    attempts: judged.attempts,
    embedding: judged.embedding,
    sourceVector: traceVector,
  };
  if (judged.storage.action === "add") return remembered({ kind: "insert", reflection: created }, created);
  return remembered(
    {
      kind: "merge",
      reflectionId: judged.storage.into,
      signature: matched.candidate.signature,
      sourceVector: traceVector,
      replacement: judged.storage.action === "update" ? created : null,
    },
    null,
  );
}
