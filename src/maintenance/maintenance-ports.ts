import type { GeneratorName, Reflection, Verdict } from "../domain/contracts/index.js";
import type { DreamGroup, DreamSource } from "../domain/maintenance/dream-groups.js";
import type { NewReflection, PatternEvidence } from "../pipeline/ports.js";

/** The ports dreaming and pruning need; Postgres and Redis adapters implement them. */

/** A judged pattern lesson: what the pipeline stores for a lesson, plus the group it sums up. */
export interface NewPattern extends Omit<NewReflection, "id" | "signatureType" | "sourceVector"> {
  tenantId: string;
  group: DreamGroup;
  embeddingModel: string;
  at: Date;
}

export interface PatternJudgement {
  tenantId: string;
  group: DreamGroup;
  verdict: Verdict;
  qualityScore: number;
  violations: string[];
  generator: Exclude<GeneratorName, "reused">;
  attempts: number;
  stored: boolean;
  at: Date;
}

export interface PruneCriteria {
  tenantId: string | null;
  /** Rows first seen before this and not seen since. */
  cutoff: Date;
  /** Rows with importance at or below this. */
  maxImportance: number;
  dryRun: boolean;
}

export interface PruneCounts {
  /** Old and unimportant enough to prune. */
  candidates: number;
  /** Kept: seen again since the cutoff. */
  keptRecent: number;
  /** Kept: someone found them helpful (👍 feedback). */
  keptHelpful: number;
  /** Deleted (or, in a dry run, that would be). */
  deleted: number;
  /** Deleted rows, so caches can forget them. */
  removed: { tenantId: string; signature: string }[];
}

export interface MaintenanceStore {
  /** Tenants with at least one reflection of this importance. */
  dreamTenants(minImportance: number): Promise<string[]>;
  /** The tenant's per-episode reflections (never patterns) of at least this importance. */
  dreamSources(tenantId: string, minImportance: number, limit: number): Promise<DreamSource[]>;
  /** Stored patterns of the tenant: signature → the source ids each was drawn from. */
  patternSources(tenantId: string): Promise<Map<string, string[]>>;
  /** Embeddings nearest `text`, leaving out `excludeIds` (a pattern is not novel against its own sources). */
  nearbyEmbeddings(
    tenantId: string,
    text: string,
    excludeIds: readonly string[],
    limit: number,
  ): Promise<number[][]>;
  patternEvidence(tenantId: string, patterns: string[]): Promise<Map<string, PatternEvidence>>;
  /** Inserts or rewrites the pattern, its sources, its strategy and its judgement in one transaction. */
  savePattern(pattern: NewPattern): Promise<"inserted" | "updated">;
  /** Records a judged pattern that was not stored, for the quality metrics and adaptive prompting. */
  recordJudgement(judgement: PatternJudgement): Promise<void>;
  prune(criteria: PruneCriteria): Promise<PruneCounts>;
}

/** Runs `work` only if no other process holds the named lock; `ran: false` when one does. */
export type ExclusiveRunner = <T>(
  name: string,
  work: () => Promise<T>,
) => Promise<{ ran: true; value: T } | { ran: false }>;

/** Drops cached signatures of deleted reflections, so the pipeline does not reuse them. */
export interface SignatureEvictor {
  forget(entries: readonly { tenantId: string; signature: string }[]): Promise<void>;
}

/** Writes a pattern-level lesson for a group; the configured LLM or the heuristic, named honestly. */
export interface PatternGenerator {
  readonly name: Exclude<GeneratorName, "reused">;
  generate(
    group: DreamGroup,
    attempt: number,
    violations: string[],
    missingFields: string[],
  ): Promise<Reflection>;
}
