import type pg from "pg";
import type { Attribution } from "../../domain/contracts/index.js";
import { isServed, servedMinQuality, type Rating } from "../../domain/feedback/effective-quality.js";
import {
  defaultEffectivenessThresholds,
  lessonEffectiveness,
  summarizeEffectiveness,
  type EffectivenessSummary,
  type EffectivenessThresholds,
} from "../../domain/feedback/lesson-effectiveness.js";
import type { ReflectionQuery, ReflectionView } from "../../domain/lessons/lesson-view.js";
import type { RecordMetadata } from "../../domain/memory/record-metadata.js";
import { withStoreErrors as guarded } from "./store-errors.js";

/**
 * The lessons feature's queries: search, lookup by signature and the effectiveness counts. Every
 * query takes the caller's tenant and filters on it, so one tenant's key never reaches another
 * tenant's rows.
 */

interface ViewRow {
  id: string;
  signature: string;
  project_id: string;
  reflection_text: string;
  strategy_text: string | null;
  learning: string;
  importance: number;
  confidence: number;
  quality_score: number;
  effective_quality: number | null;
  feedback_rating: Rating | null;
  verdict: string;
  tags: string[];
  error_category: string | null;
  attribution: Attribution | null;
  occurrences: number;
  first_seen_at: Date;
  last_seen_at: Date;
  helpful_count: number;
  harmful_count: number;
  rank: number | null;
  strategy_id: string | null;
  strategy_importance: number | null;
  /** '{}' for lessons stored before the metadata was kept. */
  metadata: RecordMetadata | Record<string, never>;
}

const viewColumns = `id, signature, project_id, reflection_text, strategy_text, learning, importance, confidence,
  quality_score, effective_quality, feedback_rating, verdict, tags, error_category, attribution, occurrences,
  first_seen_at, last_seen_at, helpful_count, harmful_count, metadata,
  (SELECT s.id FROM strategies s WHERE s.reflection_id = reflections.id) AS strategy_id,
  (SELECT s.importance FROM strategies s WHERE s.reflection_id = reflections.id)::float8 AS strategy_importance`;

/** The effective quality in SQL: the stored one once feedback set it, else the judged score. */
const effectiveSql = "COALESCE(effective_quality, quality_score)";

function toView(row: ViewRow, now: Date, thresholds: EffectivenessThresholds): ReflectionView {
  const quality = row.effective_quality ?? row.quality_score;
  return {
    id: row.id,
    signature: row.signature,
    projectId: row.project_id,
    strategy:
      row.strategy_id === null || row.strategy_importance === null
        ? null
        : { id: row.strategy_id, importance: row.strategy_importance },
    reflectionText: row.reflection_text,
    strategyText: row.strategy_text,
    learning: row.learning,
    importance: row.importance,
    confidence: row.confidence,
    judgedQuality: row.quality_score,
    effectiveQuality: quality,
    served: isServed(quality),
    verdict: row.verdict,
    tags: row.tags,
    errorCategory: row.error_category,
    attribution: row.attribution,
    occurrences: row.occurrences,
    firstSeenAt: row.first_seen_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    feedback: { helpful: row.helpful_count, harmful: row.harmful_count, latestRating: row.feedback_rating },
    effectiveness: lessonEffectiveness(
      { occurrences: row.occurrences, publishedAt: row.first_seen_at, now },
      thresholds,
    ),
    rank: row.rank,
    // Lessons stored before the metadata was kept hold '{}'.
    metadata: "outcome" in row.metadata ? (row.metadata as RecordMetadata) : null,
  };
}

/** Words of free text as an AND-query for the reflections' tsvector; empty when nothing is left. */
export function andQuery(text: string): string {
  const words = new Set(text.toLowerCase().match(/[a-z0-9]{2,}/g) ?? []);
  return [...words].slice(0, 32).join(" & ");
}

interface LessonVectorRow {
  id: string;
  project_id: string;
  strategy_text: string | null;
  learning: string;
  adjustments: string[];
  tags: string[];
  importance: number;
  effective_quality: number;
  first_seen_at: Date;
  last_seen_at: Date;
  updated_at: Date;
  vector: number[];
  applied_helped: number;
  applied_failed: number;
  occurrences: number;
  approved: boolean;
  task: string | null;
}

/** The read behind the store's `lessonVectors`. */
async function readLessonVectors(
  pool: pg.Pool,
  tenantId: string,
  embeddingModel: string,
  since: Date | null,
  page?: { afterId: string | null; limit: number },
) {
  // A page: the ids first (sorted alone, without the rows' vectors), then those rows by key.
  const which = page
    ? `id IN (SELECT id FROM reflections
               WHERE tenant_id = $1 AND embedding_model = $2 AND ($3::timestamptz IS NULL OR updated_at >= $3)
                 AND ($4::uuid IS NULL OR id > $4::uuid) ORDER BY id LIMIT $5)`
    : "tenant_id = $1 AND embedding_model = $2 AND ($3::timestamptz IS NULL OR updated_at >= $3)";
  const res = await pool.query<LessonVectorRow>(
    // The task the lesson was written for: its episode text up to the outcome line (as
    // taskOfEpisode in src/features/lessons/task-words.ts reads it), found by primary keys.
    `SELECT id, project_id, strategy_text, learning, adjustments, tags, importance,
            ${effectiveSql} AS effective_quality, first_seen_at, last_seen_at, updated_at,
            CASE WHEN cardinality(source_vector) > 0 THEN source_vector ELSE embedding END AS vector,
            applied_helped, applied_failed, occurrences, approved_at IS NOT NULL AS approved,
            (SELECT split_part(l.task_text, E'\\noutcome: ', 1)
               FROM processed_events p
               JOIN loop_traces l ON l.tenant_id = p.tenant_id AND l.loop_id = p.loop_id
              WHERE p.tenant_id = reflections.tenant_id AND p.event_id = reflections.source_event_id) AS task
       FROM reflections
      WHERE ${which}${page ? " AND tenant_id = $1 ORDER BY id" : ""}`,
    page ? [tenantId, embeddingModel, since, page.afterId, page.limit] : [tenantId, embeddingModel, since],
  );
  return res.rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    strategyText: r.strategy_text,
    learning: r.learning,
    adjustments: r.adjustments,
    tags: r.tags,
    importance: r.importance,
    effectiveQuality: r.effective_quality,
    createdAt: r.first_seen_at,
    lastSeenAt: r.last_seen_at,
    updatedAt: r.updated_at,
    vector: r.vector,
    applied: { helped: r.applied_helped, failedAgain: r.applied_failed },
    occurrences: r.occurrences,
    approved: r.approved,
    task: r.task,
  }));
}

export interface PgLessonStoreOptions {
  clock?: { now(): Date };
  effectiveness?: EffectivenessThresholds;
}

export function createPgLessonStore(pool: pg.Pool, options: PgLessonStoreOptions = {}) {
  const clock = options.clock ?? { now: () => new Date() };
  const thresholds = options.effectiveness ?? defaultEffectivenessThresholds;
  return {
    searchReflections: (tenantId: string, q: ReflectionQuery) =>
      guarded(async () => {
        const ts = q.text ? andQuery(q.text) : "";
        const res = await pool.query<ViewRow>(
          `SELECT ${viewColumns},
                  CASE WHEN $2 = '' THEN NULL ELSE ts_rank(search, to_tsquery('english', $2))::float8 END AS rank
             FROM reflections
            WHERE tenant_id = $1
              AND ($2 = '' OR search @@ to_tsquery('english', $2))
              AND tags @> $3::text[]
              AND importance >= $4
              AND ($7 OR ${effectiveSql} >= $8)
              AND ($9::text IS NULL OR project_id = $9)
            ORDER BY COALESCE(CASE WHEN $2 = '' THEN NULL ELSE ts_rank(search, to_tsquery('english', $2)) END, 1)
                       * ${effectiveSql} DESC,
                     importance DESC, last_seen_at DESC, id
            LIMIT $5 OFFSET $6`,
          [
            tenantId,
            ts,
            q.tags,
            q.minImportance,
            q.limit + 1,
            q.offset,
            q.includeWithheld ?? false,
            servedMinQuality,
            q.projectId ?? null,
          ],
        );
        const now = clock.now();
        const rows = res.rows.slice(0, q.limit).map((row) => toView(row, now, thresholds));
        return { items: rows, hasMore: res.rows.length > q.limit };
      }),

    findBySignature: (tenantId: string, signature: string) =>
      guarded(async () => {
        // A signature merged into another lesson leads to that lesson.
        const res = await pool.query<ViewRow>(
          `SELECT ${viewColumns}, NULL::float8 AS rank
             FROM reflections WHERE tenant_id = $1 AND signature = $2
           UNION ALL
           SELECT ${viewColumns}, NULL::float8 AS rank
             FROM reflections WHERE id = (SELECT reflection_id FROM reflection_aliases
                                          WHERE tenant_id = $1 AND signature = $2)
           LIMIT 1`,
          [tenantId, signature],
        );
        const row = res.rows[0];
        return row ? toView(row, clock.now(), thresholds) : null;
      }),

    sourcesOf: (tenantId: string, reflectionId: string, limit: number) =>
      guarded(async () => {
        const lesson = await pool.query("SELECT 1 FROM reflections WHERE tenant_id = $1 AND id = $2", [
          tenantId,
          reflectionId,
        ]);
        if (lesson.rowCount === 0) return null;
        const res = await pool.query<{
          event_id: string;
          loop_id: string;
          signature: string | null;
          processed_at: Date;
        }>(
          `SELECT event_id, loop_id, signature, processed_at FROM processed_events
            WHERE tenant_id = $1 AND reflection_id = $2 ORDER BY processed_at, event_id LIMIT $3`,
          [tenantId, reflectionId, limit],
        );
        return res.rows.map((r) => ({
          eventId: r.event_id,
          loopId: r.loop_id,
          signature: r.signature,
          processedAt: r.processed_at,
        }));
      }),

    /**
     * For the lessons-for-task index: how many of the tenant's lessons carry vectors of
     * `embeddingModel`, and the latest change to any of them (an index-only read).
     */
    lessonVersion: (tenantId: string, embeddingModel: string) =>
      guarded(async () => {
        const res = await pool.query<{ count: string; latest: Date | null }>(
          `SELECT count(*) AS count, max(updated_at) AS latest FROM reflections
            WHERE tenant_id = $1 AND embedding_model = $2`,
          [tenantId, embeddingModel],
        );
        const row = res.rows[0];
        return { count: Number(row?.count ?? 0), latest: row?.latest ?? null };
      }),

    /**
     * The tenant's lessons with vectors of `embeddingModel` changed at or after `since` (all when
     * null): the served text, the effective quality, and the one vector a task is compared with,
     * the source trace's (the lesson text's for lessons stored before traces were compared).
     */
    lessonVectors: (
      tenantId: string,
      embeddingModel: string,
      since: Date | null,
      page?: { afterId: string | null; limit: number },
    ) => guarded(() => readLessonVectors(pool, tenantId, embeddingModel, since, page)),

    /**
     * Stored lessons by effectiveness verdict (all tenants unless one is named), for the metrics
     * gauges. Postgres only reads each lesson's occurrences and publication time, one row per
     * occurrence count with the times as text (row-per-lesson answers cost several times more to
     * parse); the verdict is `lessonEffectiveness`'s, applied to each lesson.
     */
    effectivenessSummary: (tenantId?: string) =>
      guarded(async (): Promise<EffectivenessSummary> => {
        const res = await pool.query<{ occurrences: number; published_ms: string }>(
          `SELECT occurrences,
                  string_agg(floor(EXTRACT(EPOCH FROM first_seen_at) * 1000)::bigint::text, ',') AS published_ms
             FROM reflections WHERE $1::text IS NULL OR tenant_id = $1 GROUP BY occurrences`,
          [tenantId ?? null],
        );
        const counts = res.rows.flatMap((row) =>
          row.published_ms
            .split(",")
            .map((ms) => ({ occurrences: row.occurrences, publishedAt: new Date(Number(ms)), lessons: 1 })),
        );
        return summarizeEffectiveness(counts, clock.now(), thresholds);
      }),

    /**
     * An operator's approval of a lesson for wide serving; the first approval stands (who and
     * when), a later one changes nothing. Null when the tenant has no such lesson.
     */
    approveForServing: (tenantId: string, reflectionId: string, actor: string, at: Date) =>
      guarded(async (): Promise<{ approvedAt: Date; approvedBy: string; occurrences: number } | null> => {
        const res = await pool.query<{ approved_at: Date; approved_by: string; occurrences: number }>(
          `UPDATE reflections
              SET approved_at = COALESCE(approved_at, $3), approved_by = COALESCE(approved_by, $4)
            WHERE tenant_id = $1 AND id = $2
        RETURNING approved_at, approved_by, occurrences`,
          [tenantId, reflectionId, at, actor],
        );
        const row = res.rows[0];
        return row
          ? { approvedAt: row.approved_at, approvedBy: row.approved_by, occurrences: row.occurrences }
          : null;
      }),
  };
}
