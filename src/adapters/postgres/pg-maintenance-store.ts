import type pg from "pg";
import { patternMetadata } from "../../domain/memory/record-metadata.js";
import type { DreamSource } from "../../domain/maintenance/dream-groups.js";
import { stableId } from "../../domain/stable-id.js";
import type {
  ExclusiveRunner,
  MaintenanceStore,
  NewPattern,
  PatternJudgement,
  PruneCounts,
  PruneCriteria,
} from "../../maintenance/maintenance-ports.js";
import type { ReflectionStore } from "../../pipeline/ports.js";
import { inTransaction } from "./in-transaction.js";
// Neighbours are ranked with the same OR-query as the pipeline's novelty search.
import { orQuery } from "./pg-reflection-store.js";
import { strategyImportance } from "../../domain/memory/strategy-importance.js";

interface SourceRow {
  id: string;
  project_id: string;
  signature: string;
  signature_type: string;
  occurrences: number;
  reflection_text: string;
  strategy_text: string | null;
  learning: string;
  importance: number;
  confidence: number;
  tags: string[];
  error_category: string | null;
  patterns: string[];
  adjustments: string[];
}

const judgementEventId = (p: { group: { key: string; sources: { id: string }[] } }) =>
  `dream:${stableId("dream", p.group.key, ...p.group.sources.map((s) => s.id))}`;

function dreamSourceOf(r: SourceRow): DreamSource {
  return {
    id: r.id,
    projectId: r.project_id,
    signature: r.signature,
    signatureType: r.signature_type,
    occurrences: r.occurrences,
    reflection: {
      reflectionText: r.reflection_text,
      strategyText: r.strategy_text,
      learning: r.learning,
      importance: r.importance,
      confidence: r.confidence,
      tags: r.tags,
      errorCategory: r.error_category,
      patterns: r.patterns,
      adjustments: r.adjustments,
    },
  };
}

/** Inserts or rewrites the pattern's row; true when it was inserted. */
async function upsertPattern(client: pg.PoolClient, id: string, p: NewPattern): Promise<boolean> {
  const r = p.reflection;
  const res = await client.query<{ inserted: boolean }>(
    `INSERT INTO reflections (id, tenant_id, project_id, signature, signature_type, reflection_text,
       strategy_text, learning, importance, confidence, quality_score, verdict, metrics, violations, tags,
       error_category, patterns, adjustments, generator, attempts, embedding, source_event_id, outcome,
       first_seen_at, last_seen_at, embedding_model, kind, occurrences, metadata)
     VALUES ($1,$2,$3,$4,'pattern',$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,'partial',
       $22,$22,$23,'pattern',$24,$25)
     ON CONFLICT (tenant_id, signature) DO UPDATE SET
       reflection_text = EXCLUDED.reflection_text, strategy_text = EXCLUDED.strategy_text,
       learning = EXCLUDED.learning, importance = EXCLUDED.importance, confidence = EXCLUDED.confidence,
       quality_score = EXCLUDED.quality_score, verdict = EXCLUDED.verdict, metrics = EXCLUDED.metrics,
       violations = EXCLUDED.violations, tags = EXCLUDED.tags, error_category = EXCLUDED.error_category,
       patterns = EXCLUDED.patterns, adjustments = EXCLUDED.adjustments, generator = EXCLUDED.generator,
       attempts = EXCLUDED.attempts, embedding = EXCLUDED.embedding, source_event_id = EXCLUDED.source_event_id,
       last_seen_at = EXCLUDED.last_seen_at, embedding_model = EXCLUDED.embedding_model,
       occurrences = EXCLUDED.occurrences, metadata = EXCLUDED.metadata
     RETURNING (xmax = 0) AS inserted`,
    [
      id,
      p.tenantId,
      p.group.sources[0]?.projectId ?? "default",
      p.group.signature,
      r.reflectionText,
      r.strategyText,
      r.learning,
      r.importance,
      r.confidence,
      p.qualityScore,
      p.verdict,
      JSON.stringify(p.metrics),
      JSON.stringify(p.violations),
      r.tags,
      r.errorCategory,
      r.patterns,
      r.adjustments,
      p.generator,
      p.attempts,
      p.embedding,
      judgementEventId(p),
      p.at,
      p.embeddingModel,
      // A pattern has happened as often as all its sources together.
      Math.max(
        1,
        p.group.sources.reduce((sum, s) => sum + s.occurrences, 0),
      ),
      JSON.stringify(patternMetadata(p.group, p.at)),
    ],
  );
  return res.rows[0]?.inserted === true;
}

/** Dual storage, as for every stored lesson: the strategy on its own (strategyImportance). */
async function upsertStrategy(client: pg.PoolClient, id: string, p: NewPattern, strategyText: string) {
  await client.query(
    `INSERT INTO strategies (id, reflection_id, tenant_id, project_id, strategy_text, importance, tags)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (reflection_id) DO UPDATE SET strategy_text = EXCLUDED.strategy_text,
       importance = EXCLUDED.importance, tags = EXCLUDED.tags`,
    [
      stableId("strategy", id),
      id,
      p.tenantId,
      p.group.sources[0]?.projectId ?? "default",
      strategyText,
      strategyImportance(p.reflection.importance),
      [...new Set([...p.reflection.tags, "strategy"])],
    ],
  );
}

/** The pattern's judgement, once per group and its sources (a rerun of the same dream adds nothing). */
async function insertJudgement(db: pg.Pool | pg.PoolClient, j: PatternJudgement): Promise<void> {
  await db.query(
    `INSERT INTO reflection_judgements (tenant_id, event_id, signature, verdict, quality_score, violations,
       generator, attempts, stored, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT DO NOTHING`,
    [
      j.tenantId,
      judgementEventId(j),
      j.group.signature,
      j.verdict,
      j.qualityScore,
      JSON.stringify(j.violations),
      j.generator,
      j.attempts,
      j.stored,
      j.at,
    ],
  );
}

/** Counts the candidates and deletes those neither recent nor liked, inside the caller's transaction. */
async function pruneIn(client: pg.PoolClient, criteria: PruneCriteria): Promise<PruneCounts> {
  const params = [criteria.tenantId, criteria.cutoff, criteria.maxImportance];
  const candidates = `FROM reflections r
    WHERE ($1::text IS NULL OR r.tenant_id = $1) AND r.first_seen_at < $2 AND r.importance <= $3`;
  const helpful = `(r.helpful_count > 0 OR EXISTS (
      SELECT 1 FROM reflection_feedback f WHERE f.reflection_id = r.id AND f.rating = 'up'))`;
  const counts = await client.query<{ candidates: number; kept_recent: number; kept_helpful: number }>(
    `SELECT count(*)::int AS candidates,
            count(*) FILTER (WHERE r.last_seen_at >= $2)::int AS kept_recent,
            count(*) FILTER (WHERE r.last_seen_at < $2 AND ${helpful})::int AS kept_helpful
       ${candidates}`,
    params,
  );
  // Every condition sits in the DELETE itself: a row that recurs or is liked meanwhile stays.
  // A lesson goes with the signatures merged into it (their alias rows cascade): all are
  // returned so that none stays cached.
  const deleted = await client.query<{
    tenant_id: string;
    signature: string;
    merged_signatures: string[];
  }>(
    `DELETE FROM reflections WHERE id IN (
       SELECT r.id ${candidates} AND r.last_seen_at < $2 AND NOT ${helpful})
     RETURNING tenant_id, signature, merged_signatures`,
    params,
  );
  const row = counts.rows[0];
  return {
    candidates: row?.candidates ?? 0,
    keptRecent: row?.kept_recent ?? 0,
    keptHelpful: row?.kept_helpful ?? 0,
    deleted: deleted.rows.length,
    removed: deleted.rows.flatMap((d) =>
      [d.signature, ...d.merged_signatures].map((signature) => ({ tenantId: d.tenant_id, signature })),
    ),
  };
}

/**
 * Postgres side of dreaming and pruning. `patternEvidence` is the pipeline store's own, so a
 * pattern's evidence is counted exactly as a lesson's is.
 */
export function createPgMaintenanceStore(
  pool: pg.Pool,
  reflections: Pick<ReflectionStore, "patternEvidence">,
  /** Novelty compares vectors of this embedder only (others have other dimensions and meanings). */
  embeddingModel: string,
): MaintenanceStore {
  return {
    async dreamTenants(minImportance) {
      const res = await pool.query<{ tenant_id: string }>(
        `SELECT DISTINCT tenant_id FROM reflections WHERE kind = 'episode' AND importance >= $1 ORDER BY tenant_id`,
        [minImportance],
      );
      return res.rows.map((r) => r.tenant_id);
    },

    async dreamSources(tenantId, minImportance, limit) {
      const res = await pool.query<SourceRow>(
        `SELECT id, project_id, signature, signature_type, occurrences, reflection_text, strategy_text, learning,
                importance, confidence, tags, error_category, patterns, adjustments
           FROM reflections
          WHERE tenant_id = $1 AND kind = 'episode' AND importance >= $2
          ORDER BY importance DESC, last_seen_at DESC, id
          LIMIT $3`,
        [tenantId, minImportance, limit],
      );
      return res.rows.map(dreamSourceOf);
    },

    async patternSources(tenantId) {
      const res = await pool.query<{ signature: string; sources: string[] }>(
        `SELECT r.signature, coalesce(array_agg(s.source_id::text) FILTER (WHERE s.source_id IS NOT NULL), '{}') AS sources
           FROM reflections r LEFT JOIN reflection_sources s ON s.pattern_id = r.id
          WHERE r.tenant_id = $1 AND r.kind = 'pattern'
          GROUP BY r.signature`,
        [tenantId],
      );
      return new Map(res.rows.map((r) => [r.signature, r.sources]));
    },

    async nearbyEmbeddings(tenantId, text, excludeIds, limit) {
      const res = await pool.query<{ embedding: number[] }>(
        `SELECT embedding FROM reflections
          WHERE tenant_id = $1 AND NOT (id = ANY($4::uuid[])) AND embedding_model = $5
          ORDER BY CASE WHEN $2 = '' THEN 0 ELSE ts_rank(search, to_tsquery('english', $2)) END DESC,
                   last_seen_at DESC
          LIMIT $3`,
        [tenantId, orQuery(text), limit, excludeIds, embeddingModel],
      );
      return res.rows.map((r) => r.embedding);
    },

    patternEvidence: (tenantId, patterns) => reflections.patternEvidence(tenantId, patterns),

    async savePattern(p: NewPattern) {
      const id = stableId("pattern", p.tenantId, p.group.key);
      return inTransaction(pool, async (client) => {
        const inserted = await upsertPattern(client, id, p);
        await client.query("DELETE FROM reflection_sources WHERE pattern_id = $1", [id]);
        await client.query(
          `INSERT INTO reflection_sources (pattern_id, source_id, tenant_id)
           SELECT $1, source_id, $3 FROM unnest($2::uuid[]) AS source_id`,
          [id, p.group.sources.map((s) => s.id), p.tenantId],
        );
        if (p.reflection.strategyText) await upsertStrategy(client, id, p, p.reflection.strategyText);
        await insertJudgement(client, { ...p, stored: true });
        return inserted ? "inserted" : "updated";
      });
    },

    async recordJudgement(j) {
      await insertJudgement(pool, j);
    },

    prune: (criteria) =>
      inTransaction(pool, (client) => pruneIn(client, criteria), { dryRun: criteria.dryRun }),
  };
}

/**
 * A session-level advisory lock held on its own connection for the duration of the job: one
 * replica dreams (or prunes) at a time, and a crashed holder's lock goes with its connection.
 */
export function createPgExclusiveRunner(pool: pg.Pool): ExclusiveRunner {
  return async (name, work) => {
    const client = await pool.connect();
    try {
      const res = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked",
        [`reflector:${name}`],
      );
      if (!res.rows[0]?.locked) return { ran: false };
      try {
        return { ran: true, value: await work() };
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`reflector:${name}`]);
      }
    } finally {
      client.release();
    }
  };
}
