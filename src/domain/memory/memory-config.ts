import { z } from "zod";

/**
 * How memory decides what is the same: when a stored lesson fits a new trace, and when a new
 * lesson is the same as a stored one. Both are cosine similarities of the configured embedder;
 * the defaults were measured with the local sentence model (see docs/benchmarks.md).
 */
export const MemoryConfig = z.object({
  /** A stored lesson is reused for a trace at least this close to the trace it was written for. */
  reuseMinSimilarity: z.number().min(0).max(1).default(0.85),
  /** A new lesson at least this close to a stored one is merged into it instead of stored. */
  mergeMinSimilarity: z.number().min(0).max(1).default(0.9),
});
export type MemoryConfig = z.infer<typeof MemoryConfig>;

export const defaultMemoryConfig: MemoryConfig = MemoryConfig.parse({});
