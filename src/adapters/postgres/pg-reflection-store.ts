import { createHash } from "node:crypto";
import type pg from "pg";
import type { Reflection, TaskCompleted } from "../../domain/contracts/index.js";
import {
  extractCommonIssues,
  lowQualityBelow,
  recentLowQualityLimit,
} from "../../domain/evaluation/adaptive-insights.js";
import { ReflectorError } from "../../domain/errors.js";
import { episodeMatchesPattern } from "../../domain/quality/pattern-validity.js";
import { stableId } from "../../domain/stable-id.js";
import type {
  CommitResult,
  LoopContext,
  OutboundMessage,
  PatternEvidence,
  ReflectionStore,
  StoredReflection,
} from "../../pipeline/ports.js";

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
  };
}

/** Words of `text` as an OR-query, so that any shared word ranks a row. */
export function orQuery(text: string): string {
  const words = new Set(text.toLowerCase().match(/[a-z][a-z0-9]{2,}/g) ?? []);
  return [...words].slice(0, 64).join(" | ");
}

/** What an episode (one processed task) looked like, for pattern validity and search. */
export function episodeText(event: TaskCompleted): string {
  const parts = [event.task.description, event.task.goal, event.error?.message];
  for (const e of event.events) if (e.type === "error_event" || e.error) parts.push(e.content);
  return parts.filter(Boolean).join("\n").slice(0, 8000);
}

async function withStoreErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // Constraint and syntax errors are bugs, not outages: let them surface as they are.
    if (typeof code === "string" && /^(22|23|42)/.test(code)) throw err;
    throw new ReflectorError("STORE_UNAVAILABLE", `postgres: ${(err as Error).message}`, { cause: err });
  }
}

const reflectionColumns = `id, signature, reflection_text, strategy_text, learning, importance, confidence, tags,
  error_category, patterns, adjustments, verdict, quality_score, metrics, violations, occurrences, generator, attempts`;

export interface PgReflectionStoreOptions {
  /**
   * Name of the embedder whose vectors this process writes (`Embedder.name`). Stored with each
   * reflection; novelty reads only vectors of the same embedder, since other embedders' vectors
   * have other dimensions and meanings.
   */
  embeddingModel?: string;
}

export function createPgReflectionStore(
  pool: pg.Pool,
  options: PgReflectionStoreOptions = {},
): ReflectionStore {
  const embeddingModel = options.embeddingModel ?? "hashing-256";
  return {
    findProcessedOutputs: (tenantId, eventId) =>
      withStoreErrors(async () => {
        const res = await pool.query<{ outputs: OutboundMessage[] }>(
          "SELECT outputs FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
          [tenantId, eventId],
        );
        return res.rows[0]?.outputs ?? null;
      }),

    findBySignature: (tenantId, signature) =>
      withStoreErrors(async () => {
        const res = await pool.query<ReflectionRow>(
          `SELECT ${reflectionColumns} FROM reflections WHERE tenant_id = $1 AND signature = $2`,
          [tenantId, signature],
        );
        const row = res.rows[0];
        return row ? toStored(row) : null;
      }),

    patternEvidence: (tenantId, patterns) =>
      withStoreErrors(async () => {
        const evidence = new Map<string, PatternEvidence>();
        for (const pattern of patterns) {
          const query = orQuery(pattern);
          if (!query) {
            evidence.set(pattern, { occurrences: 0, total: 0 });
            continue;
          }
          // RT-010: retrieve the tenant's 50 most relevant episodes, then count the matching ones.
          const res = await pool.query<{ task_text: string }>(
            `SELECT task_text FROM loop_traces
              WHERE tenant_id = $1 AND to_tsvector('english', task_text) @@ to_tsquery('english', $2)
              ORDER BY ts_rank(to_tsvector('english', task_text), to_tsquery('english', $2)) DESC
              LIMIT 50`,
            [tenantId, query],
          );
          const occurrences = res.rows.filter((r) => episodeMatchesPattern(r.task_text, pattern)).length;
          evidence.set(pattern, { occurrences, total: res.rows.length });
        }
        return evidence;
      }),

    nearbyEmbeddings: (tenantId, text, limit) =>
      withStoreErrors(async () => {
        const res = await pool.query<{ embedding: number[] }>(
          `SELECT embedding FROM reflections WHERE tenant_id = $1 AND embedding_model = $4
            ORDER BY CASE WHEN $2 = '' THEN 0 ELSE ts_rank(search, to_tsquery('english', $2)) END DESC,
                     last_seen_at DESC
            LIMIT $3`,
          [tenantId, orQuery(text), limit, embeddingModel],
        );
        return res.rows.map((r) => r.embedding);
      }),

    loopContext: (event) =>
      withStoreErrors(async (): Promise<LoopContext> => {
        const tags = [...new Set((event.biasTags ?? []).map((t) => t.tag))];
        const previous = event.rerunOf
          ? await pool.query<{
              root_loop_id: string;
              rerun_depth: number;
              max_reruns: number;
              alignment: number | null;
              drift: number | null;
              reflection_fatigue: number;
            }>(
              `SELECT root_loop_id, rerun_depth, max_reruns, alignment, drift, reflection_fatigue
                 FROM loop_traces WHERE tenant_id = $1 AND loop_id = $2`,
              [event.tenantId, event.rerunOf],
            )
          : null;
        const prev = previous?.rows[0];
        // The same rule as decideLoop when the parent's trace is not known.
        const root = prev?.root_loop_id ?? (event.rerunOf ?? event.loopId).replace(/_r\d+$/, "");
        const [override, family, bias] = await Promise.all([
          // An override on the family's root covers all its reruns; the loop's own one wins.
          pool.query<{
            override_fatigue: boolean;
            override_max_reruns: boolean;
            overridden_by: string | null;
          }>(
            `SELECT override_fatigue, override_max_reruns, overridden_by FROM loop_overrides
              WHERE tenant_id = $1 AND loop_id = ANY($2::text[])
              ORDER BY (loop_id = $3) DESC LIMIT 1`,
            [event.tenantId, [event.loopId, root], event.loopId],
          ),
          pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM loop_traces
              WHERE tenant_id = $1 AND root_loop_id = $2 AND rerun_of IS NOT NULL AND loop_id <> $3`,
            [event.tenantId, root, event.loopId],
          ),
          tags.length
            ? pool.query<{ tag: string; occurrences: number }>(
                "SELECT tag, occurrences FROM bias_tag_history WHERE tenant_id = $1 AND tag = ANY($2)",
                [event.tenantId, tags],
              )
            : null,
        ]);
        const over = override.rows[0];
        return {
          previous: prev
            ? {
                rootLoopId: prev.root_loop_id,
                rerunDepth: prev.rerun_depth,
                maxReruns: prev.max_reruns,
                alignment: prev.alignment,
                drift: prev.drift,
                fatigue: prev.reflection_fatigue,
              }
            : null,
          override: over
            ? {
                overrideFatigue: over.override_fatigue,
                overrideMaxReruns: over.override_max_reruns,
                overriddenBy: over.overridden_by,
              }
            : null,
          biasHistory: new Map((bias?.rows ?? []).map((r) => [r.tag, r.occurrences])),
          familyReruns: family.rows[0]?.n ?? 0,
        };
      }),

    commonIssues: (tenantId) =>
      withStoreErrors(async () => {
        const res = await pool.query<{ issues: string[] }>(
          `(SELECT violations AS issues FROM reflection_judgements
             WHERE tenant_id = $1 AND quality_score < $2 ORDER BY created_at DESC LIMIT $3)
           UNION ALL
           (SELECT issues FROM answer_evaluations
             WHERE tenant_id = $1 AND quality < $2 ORDER BY created_at DESC LIMIT $3)`,
          [tenantId, lowQualityBelow, recentLowQualityLimit],
        );
        return extractCommonIssues(res.rows.map((r) => r.issues));
      }),

    commit: (unit, buildOutputs) =>
      withStoreErrors(async (): Promise<CommitResult> => {
        const { event, loop } = unit;
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          // Serialises two workers handling the same event id; the second sees the first's row.
          await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
            `${event.tenantId}/${event.eventId}`,
          ]);
          const seen = await client.query<{ outputs: OutboundMessage[] }>(
            "SELECT outputs FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
            [event.tenantId, event.eventId],
          );
          if (seen.rows[0]) {
            await client.query("ROLLBACK");
            return { committed: false, outputs: seen.rows[0].outputs, occurrences: null };
          }

          let occurrences: number | null = null;
          let reflectionId: string | null = null;
          if (unit.store?.kind === "insert") {
            const r = unit.store.reflection;
            const res = await client.query<{ id: string; occurrences: number; inserted: boolean }>(
              `INSERT INTO reflections (id, tenant_id, project_id, signature, signature_type, reflection_text,
                 strategy_text, learning, importance, confidence, quality_score, verdict, metrics, violations, tags,
                 error_category, patterns, adjustments, generator, attempts, embedding, source_event_id, outcome,
                 first_seen_at, last_seen_at, embedding_model)
               VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$24,$25)
               ON CONFLICT (tenant_id, signature) DO UPDATE
                 SET occurrences = reflections.occurrences + 1,
                     last_seen_at = GREATEST(reflections.last_seen_at, EXCLUDED.last_seen_at)
               RETURNING id, occurrences, (xmax = 0) AS inserted`,
              [
                r.id,
                event.tenantId,
                event.projectId,
                unit.signature,
                r.signatureType,
                r.reflection.reflectionText,
                r.reflection.strategyText,
                r.reflection.learning,
                r.reflection.importance,
                r.reflection.confidence,
                r.qualityScore,
                r.verdict,
                JSON.stringify(r.metrics),
                JSON.stringify(r.violations),
                r.reflection.tags,
                r.reflection.errorCategory,
                r.reflection.patterns,
                r.reflection.adjustments,
                r.generator,
                r.attempts,
                r.embedding,
                event.eventId,
                event.outcome,
                unit.decidedAt,
                embeddingModel,
              ],
            );
            const row = res.rows[0];
            if (!row) throw new ReflectorError("INTERNAL", "reflection upsert returned no row");
            occurrences = row.occurrences;
            reflectionId = row.id;
            if (row.inserted && r.reflection.strategyText) {
              // Dual storage (seed 002): the strategy is kept on its own with importance +10%.
              await client.query(
                `INSERT INTO strategies (id, reflection_id, tenant_id, project_id, strategy_text, importance, tags)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (reflection_id) DO NOTHING`,
                [
                  stableId("strategy", row.id),
                  row.id,
                  event.tenantId,
                  event.projectId,
                  r.reflection.strategyText,
                  Math.min(1, r.reflection.importance * 1.1),
                  [...new Set([...r.reflection.tags, "strategy"])],
                ],
              );
            }
          } else if (unit.store?.kind === "increment") {
            const res = await client.query<{ occurrences: number }>(
              `UPDATE reflections SET occurrences = occurrences + 1,
                      last_seen_at = GREATEST(last_seen_at, $2)
                WHERE id = $1 RETURNING occurrences`,
              [unit.store.reflectionId, unit.decidedAt],
            );
            occurrences = res.rows[0]?.occurrences ?? null;
            reflectionId = res.rows[0] ? unit.store.reflectionId : null;
          }

          await client.query(
            `INSERT INTO loop_traces (tenant_id, loop_id, root_loop_id, rerun_of, rerun_depth, rerun_count, max_reruns,
               outcome, alignment, drift, reflection_fatigue, fatigue_increased, bias_echo, repeated_tags, decision,
               new_loop_id, rerun_reason, rerun_reason_detail, rerun_trigger, force_finalize, overridden_by,
               orchestrator_persona, reflection_persona, task_text, source_event_id, decided_at)
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26)
             ON CONFLICT (tenant_id, loop_id) DO UPDATE SET
               root_loop_id = EXCLUDED.root_loop_id, rerun_of = EXCLUDED.rerun_of, rerun_depth = EXCLUDED.rerun_depth,
               rerun_count = EXCLUDED.rerun_count, max_reruns = EXCLUDED.max_reruns, outcome = EXCLUDED.outcome,
               alignment = EXCLUDED.alignment, drift = EXCLUDED.drift, reflection_fatigue = EXCLUDED.reflection_fatigue,
               fatigue_increased = EXCLUDED.fatigue_increased, bias_echo = EXCLUDED.bias_echo,
               repeated_tags = EXCLUDED.repeated_tags, decision = EXCLUDED.decision, new_loop_id = EXCLUDED.new_loop_id,
               rerun_reason = EXCLUDED.rerun_reason, rerun_reason_detail = EXCLUDED.rerun_reason_detail,
               rerun_trigger = EXCLUDED.rerun_trigger, force_finalize = EXCLUDED.force_finalize,
               overridden_by = EXCLUDED.overridden_by, orchestrator_persona = EXCLUDED.orchestrator_persona,
               reflection_persona = EXCLUDED.reflection_persona, task_text = EXCLUDED.task_text,
               source_event_id = EXCLUDED.source_event_id, decided_at = EXCLUDED.decided_at`,
            [
              event.tenantId,
              event.loopId,
              loop.rootLoopId,
              event.rerunOf ?? null,
              loop.rerunDepth,
              loop.rerunCount,
              loop.maxReruns,
              event.outcome,
              loop.alignment,
              loop.drift,
              loop.fatigue,
              loop.fatigueIncreased,
              loop.biasEcho,
              loop.repeatedTags,
              loop.decision,
              loop.newLoopId,
              loop.reason,
              loop.reasonDetail,
              loop.triggers,
              loop.forceFinalize,
              loop.overriddenBy,
              event.persona?.orchestrator ?? null,
              event.persona?.reflection ?? null,
              episodeText(event),
              event.eventId,
              unit.decidedAt,
            ],
          );

          if (loop.biasCounts.size > 0) {
            const counted = await client.query<{ tag: string; occurrences: number }>(
              `INSERT INTO bias_tag_history (tenant_id, tag, occurrences, last_loop_id, first_seen_at, last_seen_at)
               SELECT $1, tag, 1, $3, $4, $4 FROM unnest($2::text[]) AS tag
               ON CONFLICT (tenant_id, tag) DO UPDATE SET occurrences = bias_tag_history.occurrences + 1,
                 last_loop_id = EXCLUDED.last_loop_id, last_seen_at = EXCLUDED.last_seen_at
               RETURNING tag, occurrences`,
              [event.tenantId, [...loop.biasCounts.keys()], event.loopId, unit.decidedAt],
            );
            // The history is per tenant, so families running at once can raise the same tag: the
            // row lock orders them, and a count other than the one decided on means the decision
            // (echo or not) was made from stale state. Undo and let the caller decide again.
            if (counted.rows.some((r) => loop.biasCounts.get(r.tag) !== r.occurrences)) {
              await client.query("ROLLBACK");
              return { committed: false, outputs: [], occurrences: null, staleLoopState: true };
            }
          }

          if (unit.judgement && unit.signature) {
            const j = unit.judgement;
            await client.query(
              `INSERT INTO reflection_judgements (tenant_id, event_id, signature, verdict, quality_score, violations,
                 generator, attempts, stored, created_at)
               VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT DO NOTHING`,
              [
                event.tenantId,
                event.eventId,
                unit.signature,
                j.verdict,
                j.qualityScore,
                JSON.stringify(j.violations),
                j.generator,
                j.attempts,
                j.stored,
                unit.decidedAt,
              ],
            );
          }

          const evaluation = unit.answerEvaluation;
          if (evaluation && event.task.query && event.task.answer) {
            await client.query(
              `INSERT INTO answer_evaluations (tenant_id, event_id, loop_id, question, answer_hash, evaluator, quality,
                 confidence, relevance, completeness, issues, improvements, should_retry, created_at)
               VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT DO NOTHING`,
              [
                event.tenantId,
                event.eventId,
                event.loopId,
                event.task.query,
                createHash("sha256").update(event.task.answer).digest("hex"),
                evaluation.evaluator,
                evaluation.quality,
                evaluation.confidence,
                evaluation.relevance,
                evaluation.completeness,
                JSON.stringify(evaluation.issues),
                JSON.stringify(evaluation.improvements),
                evaluation.shouldRetry,
                unit.decidedAt,
              ],
            );
          }

          const outputs = buildOutputs(occurrences);
          await client.query(
            `INSERT INTO processed_events (tenant_id, event_id, loop_id, signature, reflection_id, outputs, processed_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)`,
            [
              event.tenantId,
              event.eventId,
              event.loopId,
              unit.signature,
              reflectionId,
              JSON.stringify(outputs),
              unit.decidedAt,
            ],
          );
          await client.query("COMMIT");
          return { committed: true, outputs, occurrences };
        } catch (err) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw err;
        } finally {
          client.release();
        }
      }),
  };
}
