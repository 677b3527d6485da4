import type pg from "pg";
import { ReflectorError } from "../../domain/errors.js";

/**
 * Read and feedback queries behind the HTTP API. Every query takes the caller's tenant and filters
 * on it, so one tenant's key never reaches another tenant's rows.
 */

/**
 * Lesson effectiveness: a stored lesson is published when its reflection is first stored
 * (`first_seen_at`); every later occurrence of the same signature is a recurrence after
 * publication. `recurrencesPerDay` divides them by the days since publication (at least one day),
 * so a lesson that works shows a rate that stays near zero.
 */
export interface LessonEffectiveness {
  recurrencesAfterPublication: number;
  recurrencesPerDay: number;
  daysSincePublication: number;
}

export interface ReflectionView {
  id: string;
  signature: string;
  projectId: string;
  reflectionText: string;
  strategyText: string | null;
  learning: string;
  importance: number;
  confidence: number;
  qualityScore: number;
  verdict: string;
  tags: string[];
  errorCategory: string | null;
  occurrences: number;
  firstSeenAt: string;
  lastSeenAt: string;
  feedback: { helpful: number; harmful: number };
  effectiveness: LessonEffectiveness;
  rank: number | null;
}

export interface ReflectionQuery {
  text?: string | undefined;
  tags: string[];
  minImportance: number;
  limit: number;
  offset: number;
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

export interface FeedbackInput {
  feedbackId: string;
  reflectionId: string;
  rating: "up" | "down";
  comment: string | null;
  source: "http" | "kafka";
  at: Date;
}

export type FeedbackResult =
  | { status: "not_found" }
  | {
      status: "recorded" | "duplicate";
      reflectionId: string;
      qualityScore: number;
      helpful: number;
      harmful: number;
    };

/** Seed 001: a thumbs-down caps quality at 0.3, a thumbs-up raises it to at least 0.7. */
export const thumbsDownQualityCap = 0.3;
export const thumbsUpQualityFloor = 0.7;

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
  verdict: string;
  tags: string[];
  error_category: string | null;
  occurrences: number;
  first_seen_at: Date;
  last_seen_at: Date;
  helpful_count: number;
  harmful_count: number;
  days: number;
  rank: number | null;
}

const viewColumns = `id, signature, project_id, reflection_text, strategy_text, learning, importance, confidence,
  quality_score, verdict, tags, error_category, occurrences, first_seen_at, last_seen_at, helpful_count, harmful_count,
  GREATEST(1, EXTRACT(EPOCH FROM ($NOW::timestamptz - first_seen_at)) / 86400)::float8 AS days`;

function toView(row: ViewRow): ReflectionView {
  const recurrences = row.occurrences - 1;
  return {
    id: row.id,
    signature: row.signature,
    projectId: row.project_id,
    reflectionText: row.reflection_text,
    strategyText: row.strategy_text,
    learning: row.learning,
    importance: row.importance,
    confidence: row.confidence,
    qualityScore: row.quality_score,
    verdict: row.verdict,
    tags: row.tags,
    errorCategory: row.error_category,
    occurrences: row.occurrences,
    firstSeenAt: row.first_seen_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    feedback: { helpful: row.helpful_count, harmful: row.harmful_count },
    effectiveness: {
      recurrencesAfterPublication: recurrences,
      recurrencesPerDay: Math.round((recurrences / row.days) * 1e4) / 1e4,
      daysSincePublication: Math.round(row.days * 1e3) / 1e3,
    },
    rank: row.rank,
  };
}

/** Words of free text as an AND-query for the reflections' tsvector; empty when nothing is left. */
export function andQuery(text: string): string {
  const words = new Set(text.toLowerCase().match(/[a-z0-9]{2,}/g) ?? []);
  return [...words].slice(0, 32).join(" & ");
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && /^(22|23|42)/.test(code)) throw err;
    throw new ReflectorError("STORE_UNAVAILABLE", `postgres: ${(err as Error).message}`, { cause: err });
  }
}

export function createPgApiStore(pool: pg.Pool, clock: { now(): Date } = { now: () => new Date() }) {
  return {
    searchReflections: (tenantId: string, q: ReflectionQuery) =>
      guarded(async () => {
        const ts = q.text ? andQuery(q.text) : "";
        const res = await pool.query<ViewRow>(
          `SELECT ${viewColumns.replace("$NOW", "$6")},
                  CASE WHEN $2 = '' THEN NULL ELSE ts_rank(search, to_tsquery('english', $2))::float8 END AS rank
             FROM reflections
            WHERE tenant_id = $1
              AND ($2 = '' OR search @@ to_tsquery('english', $2))
              AND tags @> $3::text[]
              AND importance >= $4
            ORDER BY rank DESC NULLS LAST, importance DESC, last_seen_at DESC, id
            LIMIT $5 OFFSET $7`,
          [tenantId, ts, q.tags, q.minImportance, q.limit + 1, clock.now(), q.offset],
        );
        const rows = res.rows.slice(0, q.limit).map(toView);
        return { items: rows, hasMore: res.rows.length > q.limit };
      }),

    findBySignature: (tenantId: string, signature: string) =>
      guarded(async () => {
        const res = await pool.query<ViewRow>(
          `SELECT ${viewColumns.replace("$NOW", "$3")}, NULL::float8 AS rank
             FROM reflections WHERE tenant_id = $1 AND signature = $2`,
          [tenantId, signature, clock.now()],
        );
        const row = res.rows[0];
        return row ? toView(row) : null;
      }),

    /** Every stored lesson's effectiveness, for the metrics gauge. */
    effectivenessSummary: () =>
      guarded(async () => {
        const res = await pool.query<{ lessons: string; recurrences: string | null }>(
          "SELECT count(*) AS lessons, sum(occurrences - 1) AS recurrences FROM reflections",
        );
        const row = res.rows[0];
        return { lessons: Number(row?.lessons ?? 0), recurrences: Number(row?.recurrences ?? 0) };
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
     * Stores one feedback (idempotent by feedback id), counts it on the lesson and moves its quality
     * score, all in one transaction.
     */
    recordFeedback: (tenantId: string, input: FeedbackInput) =>
      guarded(async (): Promise<FeedbackResult> => {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const target = await client.query<{ id: string }>(
            "SELECT id FROM reflections WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
            [tenantId, input.reflectionId],
          );
          if (!target.rows[0]) {
            await client.query("ROLLBACK");
            return { status: "not_found" };
          }
          const inserted = await client.query(
            `INSERT INTO reflection_feedback (tenant_id, feedback_id, reflection_id, rating, comment, source, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant_id, feedback_id) DO NOTHING`,
            [
              tenantId,
              input.feedbackId,
              input.reflectionId,
              input.rating,
              input.comment,
              input.source,
              input.at,
            ],
          );
          const fresh = inserted.rowCount === 1;
          const res = await client.query<{
            quality_score: number;
            helpful_count: number;
            harmful_count: number;
          }>(
            fresh
              ? `UPDATE reflections SET
                   quality_score = CASE WHEN $3 = 'down' THEN LEAST(quality_score, ${String(thumbsDownQualityCap)})
                                        ELSE GREATEST(quality_score, ${String(thumbsUpQualityFloor)}) END,
                   helpful_count = helpful_count + CASE WHEN $3 = 'up' THEN 1 ELSE 0 END,
                   harmful_count = harmful_count + CASE WHEN $3 = 'down' THEN 1 ELSE 0 END
                 WHERE tenant_id = $1 AND id = $2
                 RETURNING quality_score, helpful_count, harmful_count`
              : `SELECT quality_score, helpful_count, harmful_count FROM reflections
                  WHERE tenant_id = $1 AND id = $2 AND $3::text IS NOT NULL`,
            [tenantId, input.reflectionId, input.rating],
          );
          await client.query("COMMIT");
          const row = res.rows[0];
          if (!row) throw new ReflectorError("INTERNAL", "feedback target vanished inside its transaction");
          return {
            status: fresh ? "recorded" : "duplicate",
            reflectionId: input.reflectionId,
            qualityScore: row.quality_score,
            helpful: row.helpful_count,
            harmful: row.harmful_count,
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
