import type { EffectivenessSummary } from "../../domain/feedback/lesson-effectiveness.js";
import type { ReflectionQuery, ReflectionView } from "../../domain/lessons/lesson-view.js";

/**
 * What the lessons feature reads. Every call but the metrics summary is scoped to the caller's
 * tenant. Implemented by `src/adapters/postgres/pg-lesson-store.ts`.
 */
export interface LessonStore {
  /**
   * Text match (all words), tags (all of them), minimum importance; ordered by text rank times
   * effective quality. Lessons withheld by feedback are left out unless asked for.
   */
  searchReflections(
    tenantId: string,
    query: ReflectionQuery,
  ): Promise<{ items: ReflectionView[]; hasMore: boolean }>;
  /** The lesson stored for a signature (or the lesson it was merged into); null when never seen. */
  findBySignature(tenantId: string, signature: string): Promise<ReflectionView | null>;
  /**
   * The failures a stored lesson stands for: every processed event that landed on it (the one it
   * was written for, recurrences that reused it, failures merged into it), oldest first, at most
   * `limit`; null when the tenant has no such lesson.
   */
  sourcesOf(tenantId: string, reflectionId: string, limit: number): Promise<LessonSource[] | null>;
  /** Stored lessons by effectiveness verdict, of every tenant unless one is named (metrics gauges). */
  effectivenessSummary(tenantId?: string): Promise<EffectivenessSummary>;
  /**
   * Approves the tenant's lesson for wide serving (`LESSONS_SERVE_MIN_OCCURRENCES` no longer holds
   * it back); the first approval stands. Null when the tenant has no such lesson. Absent: the
   * approval route answers 503.
   */
  approveForServing?(
    tenantId: string,
    reflectionId: string,
    actor: string,
    at: Date,
  ): Promise<LessonApproval | null>;
}

/** Who approved a lesson for wide serving, and when (the first approval). */
export interface LessonApproval {
  approvedAt: Date;
  /** The audit's keyed fingerprint of the approving API key. */
  approvedBy: string;
  occurrences: number;
}

/** One failure a lesson stands for, as memory filed it. */
export interface LessonSource {
  eventId: string;
  loopId: string;
  /** The signature the event was filed under (its own, or one merged into the lesson). */
  signature: string | null;
  processedAt: Date;
}
