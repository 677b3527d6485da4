import type pg from "pg";
import { ReflectorError } from "../../domain/errors.js";
import { answerRetryBelow } from "../../domain/evaluation/answer-evaluation.js";
import { effectiveQuality, type Rating } from "../../domain/feedback/effective-quality.js";
import type { AnswerFeedbackInput, AnswerFeedbackResult } from "../../pipeline/ports.js";
import { inTransaction } from "./in-transaction.js";
import { withStoreErrors } from "./store-errors.js";

/**
 * Records one vote on a loop's answer and moves the answer's self-evaluation by the latest vote
 * (the lesson rule: 👎 → min(evaluated, 0.3), 👍 → max(evaluated, 0.7)); the evaluated quality
 * stays as it was. Adaptive prompting reads the effective quality (`commonIssues`).
 */
async function recordIn(
  client: pg.PoolClient,
  tenantId: string,
  input: AnswerFeedbackInput,
): Promise<AnswerFeedbackResult> {
  // The row locks serialise votes on one loop's answers, so the latest vote and the rows agree.
  const evaluated = await client.query<{ event_id: string; quality: number }>(
    `SELECT event_id, quality::float8 AS quality FROM answer_evaluations
      WHERE tenant_id = $1 AND loop_id = $2 ORDER BY event_id FOR UPDATE`,
    [tenantId, input.loopId],
  );
  if (evaluated.rows.length === 0) return { status: "not_found" };
  const inserted = await client.query(
    `INSERT INTO answer_feedback (tenant_id, feedback_id, loop_id, rating, comment, user_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant_id, feedback_id) DO NOTHING`,
    [tenantId, input.feedbackId, input.loopId, input.rating, input.comment, input.userId, input.at],
  );
  const fresh = inserted.rowCount === 1;
  if (!fresh) {
    const prior = await client.query<{ loop_id: string; rating: Rating }>(
      "SELECT loop_id, rating FROM answer_feedback WHERE tenant_id = $1 AND feedback_id = $2",
      [tenantId, input.feedbackId],
    );
    const row = prior.rows[0];
    if (row && (row.loop_id !== input.loopId || row.rating !== input.rating)) {
      return { status: "conflict", loopId: row.loop_id, rating: row.rating };
    }
  }
  // The latest vote decides (ties broken by the larger feedback id, as for lessons).
  const latest = await client.query<{ rating: Rating; comment: string | null; created_at: Date }>(
    `SELECT rating, comment, created_at FROM answer_feedback WHERE tenant_id = $1 AND loop_id = $2
      ORDER BY created_at DESC, feedback_id COLLATE "C" DESC LIMIT 1`,
    [tenantId, input.loopId],
  );
  const vote = latest.rows[0];
  if (!vote) throw new ReflectorError("INTERNAL", "answer feedback vanished inside its transaction");
  const answers = evaluated.rows.map((row) => {
    const effective = effectiveQuality(row.quality, vote.rating);
    return {
      eventId: row.event_id,
      judgedQuality: row.quality,
      effectiveQuality: effective,
      shouldRetry: effective < answerRetryBelow,
    };
  });
  await client.query(
    `UPDATE answer_evaluations a SET effective_quality = x.effective, feedback_rating = $3,
            feedback_comment = $4, feedback_at = $5
       FROM jsonb_to_recordset($6::jsonb) AS x(event_id text, effective real)
      WHERE a.tenant_id = $1 AND a.loop_id = $2 AND a.event_id = x.event_id`,
    [
      tenantId,
      input.loopId,
      vote.rating,
      vote.comment,
      vote.created_at,
      JSON.stringify(answers.map((a) => ({ event_id: a.eventId, effective: a.effectiveQuality }))),
    ],
  );
  return {
    status: fresh ? "recorded" : "duplicate",
    loopId: input.loopId,
    latestRating: vote.rating,
    answers,
  };
}

/** One vote on the answer of a loop of the caller's tenant, in one transaction (idempotent by feedback id). */
export function recordAnswerFeedback(
  pool: pg.Pool,
  tenantId: string,
  input: AnswerFeedbackInput,
): Promise<AnswerFeedbackResult> {
  return withStoreErrors(() => inTransaction(pool, (client) => recordIn(client, tenantId, input)));
}
