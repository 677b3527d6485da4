import type { Clock } from "../pipeline/ports.js";
import type { MaintenanceStore, PruneCounts, SignatureEvictor } from "./maintenance-ports.js";

export interface PruneOptions {
  tenantId: string | null;
  olderThanDays: number;
  maxImportance: number;
  dryRun: boolean;
}

export interface PruneReport extends Omit<PruneCounts, "removed"> {
  cutoff: string;
  maxImportance: number;
  dryRun: boolean;
}

const dayMs = 24 * 60 * 60 * 1000;

/**
 * Pruning (docs/specification.md#pruning): low-importance reflections, periodically. A reflection
 * goes only when it is old (first seen before the cutoff), unimportant (importance ≤ the maximum),
 * has not recurred since the cutoff and nobody marked it helpful: a lesson still being hit, or one
 * a person vouched for, stays whatever its score.
 */
export async function runPrune(
  deps: { store: MaintenanceStore; evictor: SignatureEvictor; clock: Clock },
  options: PruneOptions,
): Promise<PruneReport> {
  if (!(options.olderThanDays >= 1)) throw new RangeError("olderThanDays must be at least 1");
  if (!(options.maxImportance >= 0 && options.maxImportance <= 1)) {
    throw new RangeError("maxImportance must be between 0 and 1");
  }
  const cutoff = new Date(deps.clock.now().getTime() - options.olderThanDays * dayMs);
  const { removed, ...counts } = await deps.store.prune({
    tenantId: options.tenantId,
    cutoff,
    maxImportance: options.maxImportance,
    dryRun: options.dryRun,
  });
  // After the rows are gone: a cached signature would make the pipeline "reuse" a deleted lesson.
  if (!options.dryRun && removed.length) await deps.evictor.forget(removed);
  return {
    ...counts,
    cutoff: cutoff.toISOString(),
    maxImportance: options.maxImportance,
    dryRun: options.dryRun,
  };
}
