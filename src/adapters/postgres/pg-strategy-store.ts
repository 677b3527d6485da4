import type pg from "pg";
import { isServed, servedMinQuality } from "../../domain/feedback/effective-quality.js";
import type { StrategyQuery, StrategyView } from "../../domain/lessons/strategy-view.js";
import { withStoreErrors as guarded } from "./store-errors.js";

interface StrategyRow {
  id: string;
  reflection_id: string;
  project_id: string;
  strategy_text: string;
  importance: number;
  tags: string[];
  created_at: Date;
  signature: string;
  effective_quality: number;
  rank: number | null;
}

const columns = `s.id, s.reflection_id, s.project_id, s.strategy_text, s.importance::float8 AS importance, s.tags,
  s.created_at, r.signature, COALESCE(r.effective_quality, r.quality_score)::float8 AS effective_quality`;

function toView(row: StrategyRow): StrategyView {
  return {
    id: row.id,
    reflectionId: row.reflection_id,
    projectId: row.project_id,
    strategyText: row.strategy_text,
    importance: row.importance,
    tags: row.tags,
    createdAt: row.created_at.toISOString(),
    lesson: {
      signature: row.signature,
      effectiveQuality: row.effective_quality,
      served: isServed(row.effective_quality),
    },
    rank: row.rank,
  };
}

/** The strategies feature's queries, each scoped to the caller's tenant. */
export function createPgStrategyStore(pool: pg.Pool) {
  return {
    searchStrategies: (tenantId: string, query: StrategyQuery) =>
      guarded(async () => {
        const text = query.text?.trim() ? query.text.trim() : null;
        // One more row than asked for says whether a next page exists.
        const res = await pool.query<StrategyRow>(
          `SELECT ${columns},
                  CASE WHEN $2::text IS NULL THEN NULL
                       ELSE ts_rank(to_tsvector('english', s.strategy_text), plainto_tsquery('english', $2))::float8 END AS rank
             FROM strategies s JOIN reflections r ON r.id = s.reflection_id AND r.tenant_id = s.tenant_id
            WHERE s.tenant_id = $1
              AND ($2::text IS NULL OR to_tsvector('english', s.strategy_text) @@ plainto_tsquery('english', $2))
              AND ($3::text IS NULL OR s.project_id = $3)
              AND s.tags @> $4::text[]
              AND s.importance >= $5
              AND ($6 OR COALESCE(r.effective_quality, r.quality_score) >= $7)
            ORDER BY rank DESC NULLS LAST, s.importance DESC, s.created_at DESC, s.id
            LIMIT $8 OFFSET $9`,
          [
            tenantId,
            text,
            query.projectId ?? null,
            query.tags,
            query.minImportance,
            query.includeWithheld,
            servedMinQuality,
            query.limit + 1,
            query.offset,
          ],
        );
        return { items: res.rows.slice(0, query.limit).map(toView), hasMore: res.rows.length > query.limit };
      }),

    strategyById: (tenantId: string, id: string) =>
      guarded(async () => {
        const res = await pool.query<StrategyRow>(
          `SELECT ${columns}, NULL::float8 AS rank
             FROM strategies s JOIN reflections r ON r.id = s.reflection_id AND r.tenant_id = s.tenant_id
            WHERE s.tenant_id = $1 AND s.id = $2`,
          [tenantId, id],
        );
        const row = res.rows[0];
        return row ? toView(row) : null;
      }),
  };
}
