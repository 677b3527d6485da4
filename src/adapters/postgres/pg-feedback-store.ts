import type pg from "pg";
import { effectiveQuality, isServed, type Rating } from "../../domain/feedback/effective-quality.js";
import { ReflectorError } from "../../domain/errors.js";
import type { FeedbackInput, FeedbackResult } from "../../pipeline/ports.js";
import { withStoreErrors as guarded } from "./store-errors.js";

/** The feedback feature's write: one vote on a lesson of the caller's tenant. */
export function createPgFeedbackStore(pool: pg.Pool) {
  return {
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
          // Byte order on the id breaks ties in time the way decidingVote does. Votes given before
          // the lesson's text was last replaced were about the old text: they do not decide.
          const latest = await client.query<{ rating: Rating }>(
            `SELECT f.rating FROM reflection_feedback f JOIN reflections r ON r.id = f.reflection_id
              WHERE f.tenant_id = $1 AND f.reflection_id = $2
                AND (r.text_replaced_at IS NULL OR f.created_at >= r.text_replaced_at)
              ORDER BY f.created_at DESC, f.feedback_id COLLATE "C" DESC LIMIT 1`,
            [tenantId, input.reflectionId],
          );
          const rating = latest.rows[0]?.rating ?? null;
          const current = await client.query<{ quality_score: number; about_old_text: boolean }>(
            "SELECT quality_score, coalesce($2::timestamptz < text_replaced_at, false) AS about_old_text FROM reflections WHERE id = $1",
            [input.reflectionId, input.at],
          );
          const judged = current.rows[0]?.quality_score;
          const counts = fresh && current.rows[0]?.about_old_text !== true;
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
              counts && input.rating === "up" ? 1 : 0,
              counts && input.rating === "down" ? 1 : 0,
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
