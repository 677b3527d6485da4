import type { LoopStatus, OverrideInput, StoredOverride } from "../../domain/guardrails/loop-status.js";

/**
 * What the loops feature reads and writes besides deciding (the decision goes through the
 * pipeline's `LoopCompleter`). Every call is scoped to the caller's tenant. Implemented by
 * `src/adapters/postgres/pg-loop-store.ts`.
 */
export interface LoopStore {
  guardrailsStatus(tenantId: string, loopId: string): Promise<LoopStatus | null>;
  findOverride(tenantId: string, loopId: string): Promise<StoredOverride | null>;
  /** The override applies to the next decision about `loopId` (the loop that is still to complete). */
  setOverride(tenantId: string, loopId: string, input: OverrideInput): Promise<StoredOverride>;
}
