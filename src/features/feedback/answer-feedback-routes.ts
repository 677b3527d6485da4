import { randomUUID } from "node:crypto";
import { z } from "zod";
import { boundedName, storableText } from "../../domain/contracts/task-completed.js";
import type { AnswerFeedbackResult, Clock } from "../../pipeline/ports.js";
import { answers, bearer, type ApiContext, type ApiScope, type RouteRoles } from "../api-context.js";
import type { FeedbackStore } from "./feedback-store.js";

const id = boundedName(200);

/** `POST /api/v1/answers/{loop_id}/feedback`: the loop whose answer is rated. */
export const AnswerFeedbackParams = z.strictObject({ loop_id: boundedName(200) });

/** A user's 👍/👎 on the answer an agent gave in one loop. */
export const AnswerFeedbackBody = z.strictObject({
  rating: z.enum(["up", "down"]),
  comment: storableText(2_000).nullable().default(null),
  feedback_id: id.optional().describe("idempotency key; a retry with the same id is counted once"),
  user_id: id.nullable().default(null),
});

/** The answer of a recorded (or repeated) vote: the loop's answers as evaluated and as rated now. */
export const AnswerFeedbackAnswer = z.object({
  status: z.enum(["recorded", "duplicate"]),
  loop_id: z.string(),
  latest_rating: z.enum(["up", "down"]),
  answers: z.array(
    z.object({
      event_id: z.string(),
      judged_quality: z.number().describe("the self-evaluation's quality, as evaluated"),
      effective_quality: z
        .number()
        .describe("after the latest vote: 👎 min(judged, 0.3), 👍 max(judged, 0.7)"),
      should_retry: z.boolean().describe("the effective quality is below the retry line (0.5)"),
    }),
  ),
});

export const answerFeedbackRouteRoles: RouteRoles = {
  "POST /api/v1/answers/:loop_id/feedback": "vote",
};

export interface AnswerFeedbackRoutesDeps {
  store: Pick<FeedbackStore, "recordAnswerFeedback">;
  clock: Clock;
}

function answerJson(
  result: Extract<AnswerFeedbackResult, { status: "recorded" | "duplicate" }>,
): z.infer<typeof AnswerFeedbackAnswer> {
  return {
    status: result.status,
    loop_id: result.loopId,
    latest_rating: result.latestRating,
    answers: result.answers.map((a) => ({
      event_id: a.eventId,
      judged_quality: a.judgedQuality,
      effective_quality: a.effectiveQuality,
      should_retry: a.shouldRetry,
    })),
  };
}

/**
 * Users' votes on agents' answers: the latest vote moves the answer's self-evaluation, and a 👎
 * brings the answer (its issues, and the user's comment read through the insights' closed
 * vocabulary) into adaptive prompting (docs/specification.md#feedback-on-answers).
 */
export function registerAnswerFeedbackRoute(
  scope: ApiScope,
  deps: AnswerFeedbackRoutesDeps,
  ctx: ApiContext,
): void {
  scope.post(
    "/api/v1/answers/:loop_id/feedback",
    {
      schema: {
        summary: "Rate an agent's answer up or down",
        operationId: "recordAnswerFeedback",
        tags: ["feedback"],
        security: bearer,
        params: AnswerFeedbackParams,
        body: AnswerFeedbackBody,
        response: answers(
          {
            201: AnswerFeedbackAnswer.describe("recorded"),
            200: AnswerFeedbackAnswer.describe("the same feedback again: counted once"),
          },
          {
            404: "the tenant has no evaluated answer of this loop",
            409: "feedback_id already used for another loop or rating",
          },
          { body: true },
        ),
      },
    },
    async (request, reply) => {
      const record = deps.store.recordAnswerFeedback;
      if (!record) {
        return reply
          .code(503)
          .header("retry-after", "5")
          .send({ error: "unavailable", message: "answer feedback is not available" });
      }
      const tenantId = ctx.tenantOf(request);
      const { loop_id: loopId } = request.params;
      const body = request.body;
      const result = await record(tenantId, {
        feedbackId: body.feedback_id ?? randomUUID(),
        loopId,
        rating: body.rating,
        comment: body.comment,
        userId: body.user_id,
        at: deps.clock.now(),
      });
      if (result.status === "not_found") {
        return reply.code(404).send({ error: "not_found", message: `no evaluated answer of loop ${loopId}` });
      }
      if (result.status === "conflict") {
        return reply.code(409).send({
          error: "conflict",
          message: `feedback_id ${body.feedback_id ?? ""} was already used for loop ${result.loopId} rated ${result.rating}`,
        });
      }
      return reply.code(result.status === "recorded" ? 201 : 200).send(answerJson(result));
    },
  );
}
