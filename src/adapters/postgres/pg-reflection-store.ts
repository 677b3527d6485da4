import type pg from "pg";
import type { Attribution, Reflection } from "../../domain/contracts/index.js";
import {
  extractCommonIssues,
  answerRatedDown,
  lessonRatedDown,
  lowQualityBelow,
  recentLowQualityLimit,
} from "../../domain/evaluation/adaptive-insights.js";
import { ReflectorError } from "../../domain/errors.js";
import { episodeMatchesPattern } from "../../domain/quality/pattern-validity.js";
import { defaultQualityConfig, type QualityConfig } from "../../domain/quality/quality-config.js";
import type {
  CommitResult,
  OutboundMessage,
  PatternEvidence,
  ProcessedEvent,
  ReflectionStore,
  StoredReflection,
} from "../../pipeline/ports.js";
import { commitPayload, staleLoopStateCode } from "./commit-payload.js";
import { createGroupCommit } from "./group-commit.js";
import { createLoopContextBatch } from "./loop-context-batch.js";
import { withStoreErrors } from "./store-errors.js";

interface ReflectionRow {
  id: string;
  signature: string;
  reflection_text: string;
  strategy_text: string | null;
  learning: string;
  importance: number;
  confidence: number;
  tags: string[];
  error_category: string | null;
  patterns: string[];
  adjustments: string[];
  verdict: StoredReflection["verdict"];
  quality_score: number;
  metrics: StoredReflection["metrics"];
  violations: string[];
  occurrences: number;
  generator: StoredReflection["generator"];
  attempts: number;
  source_vector?: number[] | null;
  /** Null for successes and for lessons stored before attribution existed. */
  attribution: Attribution | null;
}

function toStored(row: ReflectionRow): StoredReflection {
  const reflection: Reflection = {
    reflectionText: row.reflection_text,
    strategyText: row.strategy_text,
    importance: row.importance,
    confidence: row.confidence,
    tags: row.tags,
    errorCategory: row.error_category,
    patterns: row.patterns,
    adjustments: row.adjustments,
    learning: row.learning,
    ...(row.attribution ? { attribution: row.attribution } : {}),
  };
  return {
    id: row.id,
    signature: row.signature,
    reflection,
    verdict: row.verdict,
    qualityScore: row.quality_score,
    metrics: row.metrics,
    violations: row.violations,
    occurrences: row.occurrences,
    generator: row.generator,
    attempts: row.attempts,
    sourceVector: row.source_vector ?? null,
  };
}

/** Words of `text` as an OR-query, so that any shared word ranks a row. */
export function orQuery(text: string): string {
  const words = new Set(text.toLowerCase().match(/[a-z][a-z0-9]{2,}/g) ?? []);
  return [...words].slice(0, 64).join(" | ");
}

const reflectionColumns = `id, signature, reflection_text, strategy_text, learning, importance, confidence, tags,
  error_category, patterns, adjustments, verdict, quality_score, metrics, violations, occurrences, generator, attempts,
  attribution`;
const aliasedColumns = reflectionColumns
  .split(",")
  .map((column) => `r.${column.trim()}`)
  .join(", ");

/**
 * A pattern's evidence: the tenant's topK episodes most relevant to it, and how many of them
 * match it (docs/specification.md#quality-metrics).
 */
async function countPatternEvidence(
  pool: pg.Pool,
  tenantId: string,
  pattern: string,
  validity: Pick<QualityConfig["patternValidity"], "topK" | "keywordMatchShare">,
): Promise<PatternEvidence> {
  const query = orQuery(pattern);
  if (!query) return { occurrences: 0, total: 0 };
  const res = await pool.query<{ task_text: string }>(
    `SELECT task_text FROM loop_traces
      WHERE tenant_id = $1 AND task_search @@ to_tsquery('english', $2)
      ORDER BY ts_rank(task_search, to_tsquery('english', $2)) DESC
      LIMIT $3`,
    [tenantId, query, validity.topK],
  );
  const occurrences = res.rows.filter((r) =>
    episodeMatchesPattern(r.task_text, pattern, validity.keywordMatchShare),
  ).length;
  return { occurrences, total: res.rows.length };
}

interface NearbyRow {
  id: string;
  embedding: number[];
  quality_score: number;
  attribution: Attribution | null;
}

function nearbyOf(r: NearbyRow) {
  return {
    id: r.id,
    embedding: r.embedding,
    qualityScore: r.quality_score,
    failingStep: r.attribution
      ? {
          actor: r.attribution.actor,
          toolName: r.attribution.toolName,
          confidence: r.attribution.confidence,
          ...(r.attribution.action ? { action: r.attribution.action } : {}),
        }
      : null,
  };
}

export interface PgReflectionStoreOptions {
  /**
   * Name of the embedder whose vectors this process writes (`Embedder.name`). Stored with each
   * reflection; novelty reads only vectors of the same embedder, since other embedders' vectors
   * have other dimensions and meanings.
   */
  embeddingModel?: string;
  /** How pattern evidence is gathered: episodes retrieved per pattern and the keyword share of a match. */
  patternValidity?: Pick<QualityConfig["patternValidity"], "topK" | "keywordMatchShare">;
}

export function createPgReflectionStore(
  pool: pg.Pool,
  options: PgReflectionStoreOptions = {},
): ReflectionStore {
  const embeddingModel = options.embeddingModel ?? "hashing-256";
  const { topK, keywordMatchShare } = options.patternValidity ?? defaultQualityConfig.patternValidity;
  // One group at a time. Two at once measured 115–118 events/s against 348–382 with one (e2e,
  // hashing), the persist stage 401–461 ms against 83–89: groups of one tenant's events lock the
  // same rows (lessons' counts, the bias history), so the second waits for the first anyway.
  const group = createGroupCommit(pool, { maxUnits: 64, maxGroups: 1 });
  // The loop context that every event reads before it decides: one statement for the events
  // that ask in the same turn (docs/benchmarks.md, "e2e: where a drain's CPU goes").
  const loopContexts = createLoopContextBatch(pool, { maxEvents: 256 });
  async function findProcessed(tenantId: string, eventId: string): Promise<ProcessedEvent | null> {
    const res = await pool.query<{
      outputs: OutboundMessage[];
      occurrences: number | null;
      source_record: string | null;
    }>(
      "SELECT outputs, occurrences, source_record FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
      [tenantId, eventId],
    );
    const row = res.rows[0];
    return row
      ? { outputs: row.outputs, occurrences: row.occurrences, sourceRecord: row.source_record }
      : null;
  }
  return {
    findProcessed: (tenantId, eventId) => withStoreErrors(() => findProcessed(tenantId, eventId)),

    findBySignature: (tenantId, signature) =>
      withStoreErrors(async () => {
        // Its own signature first, else one merged into it; the source vector is the one of the
        // trace that signature came from, and only this embedder's vectors can be compared.
        const res = await pool.query<ReflectionRow>({
          name: "reflector-find-by-signature",
          text: `SELECT ${reflectionColumns},
                        CASE WHEN embedding_model = $3 THEN source_vector END AS source_vector
                   FROM reflections WHERE tenant_id = $1 AND signature = $2
                 UNION ALL
                 SELECT ${aliasedColumns},
                        CASE WHEN r.embedding_model = $3 THEN a.source_vector END AS source_vector
                   FROM reflection_aliases a JOIN reflections r ON r.id = a.reflection_id
                  WHERE a.tenant_id = $1 AND a.signature = $2
                 LIMIT 1`,
          values: [tenantId, signature, embeddingModel],
        });
        const row = res.rows[0];
        return row ? { ...toStored(row), signature } : null;
      }),

    patternEvidence: (tenantId, patterns) =>
      withStoreErrors(async () => {
        // One query per pattern, all at once: a judgement waits for the slowest, not for their sum.
        const counted = await Promise.all(
          patterns.map(async (pattern): Promise<[string, PatternEvidence]> => [
            pattern,
            await countPatternEvidence(pool, tenantId, pattern, { topK, keywordMatchShare }),
          ]),
        );
        return new Map(counted);
      }),

    nearbyReflections: (tenantId, text, limit) =>
      withStoreErrors(async () => {
        const res = await pool.query<NearbyRow>(
          `SELECT id, embedding, quality_score, attribution FROM reflections WHERE tenant_id = $1 AND embedding_model = $4
            ORDER BY CASE WHEN $2 = '' THEN 0 ELSE ts_rank(search, to_tsquery('english', $2)) END DESC,
                     last_seen_at DESC
            LIMIT $3`,
          [tenantId, orQuery(text), limit, embeddingModel],
        );
        return res.rows.map(nearbyOf);
      }),

    loopContext: (event) => withStoreErrors(() => loopContexts.read(event)),

    commonIssues: (tenantId) =>
      withStoreErrors(async () => {
        // Users' votes count as evaluations: an answer whose effective quality a 👎 lowered, and a
        // lesson users rated down, are low-quality results with the rating (and the user's comment,
        // read only through the insights' closed vocabulary) among their issues.
        const res = await pool.query<{ issues: string[] }>(
          `(SELECT violations AS issues FROM reflection_judgements
             WHERE tenant_id = $1 AND quality_score < $2 ORDER BY created_at DESC LIMIT $3)
           UNION ALL
           (SELECT issues || CASE WHEN feedback_rating = 'down'
                                  THEN jsonb_build_array($4::text) || CASE WHEN feedback_comment IS NULL THEN '[]'
                                                                      ELSE jsonb_build_array(feedback_comment) END
                                  ELSE '[]' END AS issues
              FROM answer_evaluations
             WHERE tenant_id = $1 AND coalesce(effective_quality, quality) < $2
             ORDER BY greatest(created_at, feedback_at) DESC LIMIT $3)
           UNION ALL
           (SELECT r.violations || jsonb_build_array($5::text)
                   || coalesce((SELECT jsonb_build_array(f.comment) FROM reflection_feedback f
                                 WHERE f.tenant_id = r.tenant_id AND f.reflection_id = r.id AND f.rating = 'down'
                                   AND f.comment IS NOT NULL ORDER BY f.created_at DESC LIMIT 1), '[]') AS issues
              FROM reflections r
             WHERE r.tenant_id = $1 AND r.feedback_rating = 'down' ORDER BY r.updated_at DESC LIMIT $3)`,
          [tenantId, lowQualityBelow, recentLowQualityLimit, answerRatedDown, lessonRatedDown],
        );
        return extractCommonIssues(res.rows.map((r) => r.issues));
      }),

    commit: (unit, outputs) =>
      withStoreErrors(async (): Promise<CommitResult> => {
        const payload = commitPayload(unit, embeddingModel, outputs);
        let row: { committed: boolean; occurrences: number | null; outputs: OutboundMessage[] | null };
        const grouped = await group.submit(payload);
        if (grouped.sqlstate === staleLoopStateCode) {
          // Nothing of this unit was written: its subtransaction was rolled back.
          return { committed: false, outputs: [], occurrences: null, staleLoopState: true };
        }
        if (grouped.sqlstate === null) {
          row = { ...grouped, outputs: grouped.outputs as OutboundMessage[] | null };
        } else {
          // Rolled back alone (a deadlock with another instance, bad data): once more on its own,
          // where a failure surfaces as the error it is.
          try {
            const res = await pool.query<typeof row>({
              name: "reflector-commit",
              text: "SELECT committed, occurrences, outputs FROM reflector_commit($1)",
              values: [JSON.stringify(payload)],
            });
            const single = res.rows[0];
            if (!single) throw new ReflectorError("INTERNAL", "reflector_commit returned no row");
            row = single;
          } catch (err) {
            if ((err as { code?: unknown }).code === staleLoopStateCode)
              return { committed: false, outputs: [], occurrences: null, staleLoopState: true };
            throw err;
          }
        }
        if (!row.committed) {
          // Another record committed this event id between the processed check and this commit.
          const committedBy = (await findProcessed(unit.event.tenantId, unit.event.eventId))?.sourceRecord;
          return { committed: false, outputs: row.outputs ?? [], occurrences: row.occurrences, committedBy };
        }
        return { committed: true, outputs, occurrences: row.occurrences };
      }),
  };
}
