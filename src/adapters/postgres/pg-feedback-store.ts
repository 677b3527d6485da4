import type pg from "pg";
import { qualityAfterOutcomes, type AppliedOutcome } from "../../domain/feedback/applied-outcome.js";
import { effectiveQuality, isServed, type Rating } from "../../domain/feedback/effective-quality.js";
import { ReflectorError } from "../../domain/errors.js";
import type { AnswerFeedbackInput, FeedbackInput, FeedbackResult } from "../../pipeline/ports.js";
import { recordAnswerFeedback } from "./pg-answer-feedback.js";
import { inTransaction } from "./in-transaction.js";
import { withStoreErrors as guarded } from "./store-errors.js";

/** Stores the vote unless its feedback id is known; true when it was new. */
async function insertFeedback(
  client: pg.PoolClient,
  tenantId: string,
  input: FeedbackInput,
): Promise<boolean> {
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
  return inserted.rowCount === 1;
}

/** A known feedback id given again for another lesson or with another rating: a conflict. */
async function conflictWith(
  client: pg.PoolClient,
  tenantId: string,
  input: FeedbackInput,
): Promise<FeedbackResult | null> {
  const existing = await client.query<{ reflection_id: string; rating: Rating }>(
    "SELECT reflection_id, rating FROM reflection_feedback WHERE tenant_id = $1 AND feedback_id = $2",
    [tenantId, input.feedbackId],
  );
  const prior = existing.rows[0];
  if (prior && (prior.reflection_id !== input.reflectionId || prior.rating !== input.rating)) {
    return { status: "conflict", reflectionId: prior.reflection_id, rating: prior.rating };
  }
  return null;
}

/** The vote that decides: the latest about the lesson's current text, or null. */
async function decidingRating(
  client: pg.PoolClient,
  tenantId: string,
  reflectionId: string,
): Promise<Rating | null> {
  // Byte order on the id breaks ties in time the way decidingVote does. Votes given before
  // the lesson's text was last replaced were about the old text: they do not decide.
  const latest = await client.query<{ rating: Rating }>(
    `SELECT f.rating FROM reflection_feedback f JOIN reflections r ON r.id = f.reflection_id
      WHERE f.tenant_id = $1 AND f.reflection_id = $2
        AND (r.text_replaced_at IS NULL OR f.created_at >= r.text_replaced_at)
      ORDER BY f.created_at DESC, f.feedback_id COLLATE "C" DESC LIMIT 1`,
    [tenantId, reflectionId],
  );
  return latest.rows[0]?.rating ?? null;
}

/**
 * Stores one feedback, counts it on the lesson and recomputes the effective quality from the
 * latest vote, inside the caller's transaction.
 */
async function recordFeedbackIn(
  client: pg.PoolClient,
  tenantId: string,
  input: FeedbackInput,
): Promise<FeedbackResult> {
  // The row lock serialises feedback on one lesson, so counters and the latest vote agree.
  const target = await client.query<{ id: string }>(
    "SELECT id FROM reflections WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
    [tenantId, input.reflectionId],
  );
  if (!target.rows[0]) return { status: "not_found" };
  const fresh = await insertFeedback(client, tenantId, input);
  if (!fresh) {
    const conflict = await conflictWith(client, tenantId, input);
    if (conflict) return conflict;
  }
  const rating = await decidingRating(client, tenantId, input.reflectionId);
  const current = await client.query<{
    quality_score: number;
    about_old_text: boolean;
    applied_helped: number;
    applied_failed: number;
  }>(
    `SELECT quality_score, coalesce($2::timestamptz < text_replaced_at, false) AS about_old_text,
            applied_helped, applied_failed
       FROM reflections WHERE id = $1`,
    [input.reflectionId, input.at],
  );
  const applied = current.rows[0];
  if (!applied) throw new ReflectorError("INTERNAL", "feedback target vanished inside its transaction");
  const judged = applied.quality_score;
  const counts = fresh && !applied.about_old_text;
  // The vote decides first; how the lesson fared when applied then moves it (applied-outcome.ts).
  const effective = qualityAfterOutcomes(
    effectiveQuality(judged, rating),
    rating,
    applied.applied_helped,
    applied.applied_failed,
  );
  const res = await client.query<{ helpful_count: number; harmful_count: number }>(
    `UPDATE reflections SET effective_quality = $2, feedback_rating = $3,
            helpful_count = helpful_count + $4, harmful_count = harmful_count + $5
      WHERE id = $1 RETURNING helpful_count, harmful_count`,
    [
      input.reflectionId,
      effective,
      rating,
      counts && input.rating === "up" ? 1 : 0,
      counts && input.rating === "down" ? 1 : 0,
    ],
  );
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
}

/** The feedback feature's write: one vote on a lesson of the caller's tenant. */
export function createPgFeedbackStore(pool: pg.Pool) {
  return {
    /**
     * Stores one feedback (idempotent by feedback id), counts it on the lesson and recomputes the
     * effective quality from the latest vote, in one transaction. The judged score is untouched.
     * A refused vote (no such lesson, a conflict) has written nothing when its transaction ends.
     */
    recordFeedback: (tenantId: string, input: FeedbackInput) =>
      guarded(() => inTransaction(pool, (client) => recordFeedbackIn(client, tenantId, input))),

    /** One vote on a loop's answer: moves its self-evaluation's effective quality (pg-answer-feedback.ts). */
    recordAnswerFeedback: (tenantId: string, input: AnswerFeedbackInput) =>
      recordAnswerFeedback(pool, tenantId, input),

    /** The lessons the decision about `loopId` carried, read from the outputs it committed. */
    lessonsCarriedTo: (tenantId: string, loopId: string) =>
      guarded(async () => {
        const res = await pool.query<{ id: string }>(
          `SELECT DISTINCT lesson->>'reflectionId' AS id
             FROM loop_traces l
             JOIN processed_events p ON p.tenant_id = l.tenant_id AND p.event_id = l.source_event_id
             CROSS JOIN LATERAL jsonb_array_elements(p.outputs) AS o
             CROSS JOIN LATERAL jsonb_array_elements(coalesce(o->'value'->'lessons', '[]'::jsonb)) AS lesson
            WHERE l.tenant_id = $1 AND l.loop_id = $2 AND o->>'role' = 'loopDecision'`,
          [tenantId, loopId],
        );
        return res.rows.map((r) => r.id);
      }),

    /**
     * Counts one event's applied outcomes once (a replay inserts nothing and moves nothing), on
     * lessons of the tenant only, and recomputes their effective quality, in one transaction.
     */
    recordApplied: (tenantId: string, eventId: string, outcomes: readonly AppliedOutcome[], at: Date) =>
      guarded(async () => {
        if (outcomes.length === 0) return;
        await inTransaction(pool, async (client) => {
          const counted = await client.query<{
            id: string;
            quality_score: number;
            feedback_rating: Rating | null;
            applied_helped: number;
            applied_failed: number;
          }>(
            `WITH input AS (
                 SELECT x.reflection_id, x.result FROM jsonb_to_recordset($3::jsonb) AS x(reflection_id uuid, result text)
               ), inserted AS (
                 INSERT INTO lesson_outcomes (tenant_id, event_id, reflection_id, result, recorded_at)
                 SELECT $1, $2, i.reflection_id, i.result, $4 FROM input i
                  WHERE EXISTS (SELECT 1 FROM reflections r WHERE r.tenant_id = $1 AND r.id = i.reflection_id)
                 ON CONFLICT DO NOTHING
                 RETURNING reflection_id, result
               ), per_lesson AS (
                 SELECT reflection_id, count(*) FILTER (WHERE result = 'helped') AS helped,
                        count(*) FILTER (WHERE result = 'failed_again') AS failed
                   FROM inserted GROUP BY reflection_id
               )
               UPDATE reflections r SET applied_helped = r.applied_helped + c.helped,
                                        applied_failed = r.applied_failed + c.failed
                 FROM per_lesson c WHERE r.id = c.reflection_id AND r.tenant_id = $1
               RETURNING r.id, r.quality_score, r.feedback_rating, r.applied_helped, r.applied_failed`,
            [
              tenantId,
              eventId,
              JSON.stringify(outcomes.map((o) => ({ reflection_id: o.reflectionId, result: o.result }))),
              at,
            ],
          );
          for (const row of counted.rows) {
            const quality = qualityAfterOutcomes(
              effectiveQuality(row.quality_score, row.feedback_rating),
              row.feedback_rating,
              row.applied_helped,
              row.applied_failed,
            );
            await client.query("UPDATE reflections SET effective_quality = $2 WHERE id = $1", [
              row.id,
              quality,
            ]);
          }
        });
      }),
  };
}
