import type pg from "pg";
import type { Attribution } from "../../domain/contracts/index.js";
import { ReflectorError } from "../../domain/errors.js";
import { withStoreErrors } from "./store-errors.js";
import type { FeedbackInput, FeedbackResult } from "../../pipeline/ports.js";
import {
  effectiveQuality,
  isServed,
  servedMinQuality,
  type Rating,
} from "../../domain/feedback/effective-quality.js";
import {
  defaultEffectivenessThresholds,
  lessonEffectiveness,
  type EffectivenessThresholds,
  type EffectivenessVerdict,
  type LessonEffectiveness,
} from "../../domain/feedback/lesson-effectiveness.js";

/**
 * Read and feedback queries behind the HTTP API. Every query takes the caller's tenant and filters
 * on it, so one tenant's key never reaches another tenant's rows.
 */

export interface ReflectionView {
  id: string;
  signature: string;
  projectId: string;
  reflectionText: string;
  strategyText: string | null;
  learning: string;
  importance: number;
  confidence: number;
  /** The quality score the judge gave; feedback never changes it. */
  judgedQuality: number;
  /** The judged score after the feedback override; what ranking and serving use. */
  effectiveQuality: number;
  /** False when feedback pushed the effective quality below the serving floor. */
  served: boolean;
  verdict: string;
  tags: string[];
  errorCategory: string | null;
  /** Where the failure went wrong and which agent did it; null for successes and older lessons. */
  attribution: Attribution | null;
  occurrences: number;
  firstSeenAt: string;
  lastSeenAt: string;
  feedback: { helpful: number; harmful: number; latestRating: Rating | null };
  effectiveness: LessonEffectiveness;
  /** Full-text rank of the query words; null without a text query. */
  rank: number | null;
}

export interface ReflectionQuery {
  text?: string | undefined;
  tags: string[];
  minImportance: number;
  limit: number;
  offset: number;
  /** Also return lessons withheld by feedback (operators reviewing them). */
  includeWithheld?: boolean;
}

export interface GuardrailsStatusRow {
  loopId: string;
  rootLoopId: string;
  rerunCount: number;
  maxReruns: number;
  decision: string;
  newLoopId: string | null;
  biasEcho: boolean;
  repeatedTags: string[];
  reflectionFatigue: number;
  fatigueIncreased: boolean;
  forceFinalize: boolean;
  rerunReason: string;
  rerunReasonDetail: string;
  rerunTrigger: string[];
  overriddenBy: string | null;
  alignment: number | null;
  drift: number | null;
  outcome: string;
  orchestratorPersona: string | null;
  reflectionPersona: string | null;
  decidedAt: string;
}

export interface OverrideInput {
  overrideFatigue: boolean;
  overrideMaxReruns: boolean;
  overriddenBy: string | null;
  overrideReason: string | null;
}

export interface StoredOverride extends OverrideInput {
  loopId: string;
  updatedAt: string;
}

export type { FeedbackInput, FeedbackResult } from "../../pipeline/ports.js";

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
}

const viewColumns = `id, signature, project_id, reflection_text, strategy_text, learning, importance, confidence,
  quality_score, effective_quality, feedback_rating, verdict, tags, error_category, attribution, occurrences,
  first_seen_at, last_seen_at, helpful_count, harmful_count`;

/** The effective quality in SQL: the stored one once feedback set it, else the judged score. */
const effectiveSql = "COALESCE(effective_quality, quality_score)";

function toView(row: ViewRow, now: Date, thresholds: EffectivenessThresholds): ReflectionView {
  const quality = row.effective_quality ?? row.quality_score;
  return {
    id: row.id,
    signature: row.signature,
    projectId: row.project_id,
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
  };
}

/** Words of free text as an AND-query for the reflections' tsvector; empty when nothing is left. */
export function andQuery(text: string): string {
  const words = new Set(text.toLowerCase().match(/[a-z0-9]{2,}/g) ?? []);
  return [...words].slice(0, 32).join(" & ");
}

const guarded = withStoreErrors;

export interface PgApiStoreOptions {
  clock?: { now(): Date };
  effectiveness?: EffectivenessThresholds;
}

export function createPgApiStore(pool: pg.Pool, options: PgApiStoreOptions = {}) {
  const clock = options.clock ?? { now: () => new Date() };
  const thresholds = options.effectiveness ?? defaultEffectivenessThresholds;
  return {
    /**
     * Text match (all words), tags (all of them), minimum importance; ordered by text rank times
     * effective quality, so a lesson users rated up outranks an equally relevant one they did not.
     * Lessons withheld by feedback are left out unless asked for.
     */
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

    /**
     * Stored lessons by effectiveness verdict (all tenants unless one is named), for the metrics gauges. The
     * same rule as `lessonEffectiveness`, in SQL so a scrape reads one row per verdict rather than
     * every lesson (a test checks the two agree).
     */
    effectivenessSummary: (tenantId?: string) =>
      guarded(async () => {
        const res = await pool.query<{ verdict: EffectivenessVerdict; lessons: string; recurrences: string }>(
          `WITH l AS (
             SELECT occurrences - 1 AS recurrences,
                    GREATEST(0, EXTRACT(EPOCH FROM ($1::timestamptz - first_seen_at)) / 86400) AS days
               FROM reflections WHERE $5::text IS NULL OR tenant_id = $5)
           SELECT CASE
                    WHEN recurrences >= $2 AND recurrences / GREATEST(days, 7) * 7 >= $3 THEN 'ineffective'
                    WHEN days >= $4 AND recurrences / GREATEST(days, 7) * 7 < $3 THEN 'effective'
                    ELSE 'insufficient_data'
                  END AS verdict,
                  count(*) AS lessons, sum(recurrences) AS recurrences
             FROM l GROUP BY 1`,
          [
            clock.now(),
            thresholds.minRecurrencesForIneffective,
            thresholds.ineffectiveRecurrencesPerWeek,
            thresholds.minObservationDays,
            tenantId ?? null,
          ],
        );
        const summary: Record<EffectivenessVerdict, { lessons: number; recurrences: number }> = {
          effective: { lessons: 0, recurrences: 0 },
          ineffective: { lessons: 0, recurrences: 0 },
          insufficient_data: { lessons: 0, recurrences: 0 },
        };
        for (const row of res.rows) {
          summary[row.verdict] = { lessons: Number(row.lessons), recurrences: Number(row.recurrences) };
        }
        return summary;
      }),

    guardrailsStatus: (tenantId: string, loopId: string) =>
      guarded(async (): Promise<GuardrailsStatusRow | null> => {
        const res = await pool.query<{
          loop_id: string;
          root_loop_id: string;
          rerun_count: number;
          max_reruns: number;
          decision: string;
          new_loop_id: string | null;
          bias_echo: boolean;
          repeated_tags: string[];
          reflection_fatigue: number;
          fatigue_increased: boolean;
          force_finalize: boolean;
          rerun_reason: string;
          rerun_reason_detail: string;
          rerun_trigger: string[];
          overridden_by: string | null;
          alignment: number | null;
          drift: number | null;
          outcome: string;
          orchestrator_persona: string | null;
          reflection_persona: string | null;
          decided_at: Date;
        }>("SELECT * FROM loop_traces WHERE tenant_id = $1 AND loop_id = $2", [tenantId, loopId]);
        const r = res.rows[0];
        if (!r) return null;
        return {
          loopId: r.loop_id,
          rootLoopId: r.root_loop_id,
          rerunCount: r.rerun_count,
          maxReruns: r.max_reruns,
          decision: r.decision,
          newLoopId: r.new_loop_id,
          biasEcho: r.bias_echo,
          repeatedTags: r.repeated_tags,
          reflectionFatigue: r.reflection_fatigue,
          fatigueIncreased: r.fatigue_increased,
          forceFinalize: r.force_finalize,
          rerunReason: r.rerun_reason,
          rerunReasonDetail: r.rerun_reason_detail,
          rerunTrigger: r.rerun_trigger,
          overriddenBy: r.overridden_by,
          alignment: r.alignment,
          drift: r.drift,
          outcome: r.outcome,
          orchestratorPersona: r.orchestrator_persona,
          reflectionPersona: r.reflection_persona,
          decidedAt: r.decided_at.toISOString(),
        };
      }),

    findOverride: (tenantId: string, loopId: string) =>
      guarded(async (): Promise<StoredOverride | null> => {
        const res = await pool.query<{
          override_fatigue: boolean;
          override_max_reruns: boolean;
          overridden_by: string | null;
          override_reason: string | null;
          updated_at: Date;
        }>(
          `SELECT override_fatigue, override_max_reruns, overridden_by, override_reason, updated_at
             FROM loop_overrides WHERE tenant_id = $1 AND loop_id = $2`,
          [tenantId, loopId],
        );
        const r = res.rows[0];
        if (!r) return null;
        return {
          loopId,
          overrideFatigue: r.override_fatigue,
          overrideMaxReruns: r.override_max_reruns,
          overriddenBy: r.overridden_by,
          overrideReason: r.override_reason,
          updatedAt: r.updated_at.toISOString(),
        };
      }),

    /** The override applies to the next decision about `loopId` (the loop that is still to complete). */
    setOverride: (tenantId: string, loopId: string, input: OverrideInput) =>
      guarded(async (): Promise<StoredOverride> => {
        const res = await pool.query<{ updated_at: Date }>(
          `INSERT INTO loop_overrides (tenant_id, loop_id, override_fatigue, override_max_reruns, overridden_by,
             override_reason, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (tenant_id, loop_id) DO UPDATE SET override_fatigue = EXCLUDED.override_fatigue,
             override_max_reruns = EXCLUDED.override_max_reruns, overridden_by = EXCLUDED.overridden_by,
             override_reason = EXCLUDED.override_reason, updated_at = EXCLUDED.updated_at
           RETURNING updated_at`,
          [
            tenantId,
            loopId,
            input.overrideFatigue,
            input.overrideMaxReruns,
            input.overriddenBy,
            input.overrideReason,
            clock.now(),
          ],
        );
        return { loopId, ...input, updatedAt: (res.rows[0]?.updated_at ?? clock.now()).toISOString() };
      }),

    /**
     * Stores one feedback (idempotent by feedback id), counts it on the lesson and recomputes the
     * effective quality from the latest vote, in one transaction. The judged score is untouched.
     */
    recordFeedback: (tenantId: string, input: FeedbackInput) =>
      guarded(async (): Promise<FeedbackResult> => {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          // The row lock serialises feedback on one lesson, so counters and the latest vote agree.
          const target = await client.query<{ id: string }>(
            "SELECT id FROM reflections WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
            [tenantId, input.reflectionId],
          );
          if (!target.rows[0]) {
            await client.query("ROLLBACK");
            return { status: "not_found" };
          }
          const inserted = await client.query(
            `INSERT INTO reflection_feedback (tenant_id, feedback_id, reflection_id, rating, comment, source,
               created_at, user_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, feedback_id) DO NOTHING`,
            [
              tenantId,
              input.feedbackId,
              input.reflectionId,
              input.rating,
              input.comment,
              input.source,
              input.at,
              input.userId,
            ],
          );
          const fresh = inserted.rowCount === 1;
          if (!fresh) {
            const existing = await client.query<{ reflection_id: string; rating: Rating }>(
              "SELECT reflection_id, rating FROM reflection_feedback WHERE tenant_id = $1 AND feedback_id = $2",
              [tenantId, input.feedbackId],
            );
            const prior = existing.rows[0];
            if (prior && (prior.reflection_id !== input.reflectionId || prior.rating !== input.rating)) {
              await client.query("ROLLBACK");
              return { status: "conflict", reflectionId: prior.reflection_id, rating: prior.rating };
            }
          }
          // Byte order on the id breaks ties in time the way decidingVote does.
          const latest = await client.query<{ rating: Rating }>(
            `SELECT rating FROM reflection_feedback WHERE tenant_id = $1 AND reflection_id = $2
              ORDER BY created_at DESC, feedback_id COLLATE "C" DESC LIMIT 1`,
            [tenantId, input.reflectionId],
          );
          const rating = latest.rows[0]?.rating ?? null;
          const current = await client.query<{ quality_score: number }>(
            "SELECT quality_score FROM reflections WHERE id = $1",
            [input.reflectionId],
          );
          const judged = current.rows[0]?.quality_score;
          if (judged === undefined)
            throw new ReflectorError("INTERNAL", "feedback target vanished inside its transaction");
          const effective = effectiveQuality(judged, rating);
          const res = await client.query<{ helpful_count: number; harmful_count: number }>(
            `UPDATE reflections SET effective_quality = $2, feedback_rating = $3,
                    helpful_count = helpful_count + $4, harmful_count = harmful_count + $5
              WHERE id = $1 RETURNING helpful_count, harmful_count`,
            [
              input.reflectionId,
              effective,
              rating,
              fresh && input.rating === "up" ? 1 : 0,
              fresh && input.rating === "down" ? 1 : 0,
            ],
          );
          await client.query("COMMIT");
          const row = res.rows[0];
          if (!row) throw new ReflectorError("INTERNAL", "feedback target vanished inside its transaction");
          return {
            status: fresh ? "recorded" : "duplicate",
            reflectionId: input.reflectionId,
            judgedQuality: judged,
            effectiveQuality: effective,
            served: isServed(effective),
            helpful: row.helpful_count,
            harmful: row.harmful_count,
            latestRating: rating,
          };
        } catch (err) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw err;
        } finally {
          client.release();
        }
      }),
  };
}

export type PgApiStore = ReturnType<typeof createPgApiStore>;
