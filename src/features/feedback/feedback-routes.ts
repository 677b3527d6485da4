import { randomUUID } from "node:crypto";
import { answers, bearer, type ApiContext, type ApiScope, type RouteRoles } from "../api-context.js";
import type { Clock } from "../../pipeline/ports.js";
import { feedbackJson } from "./feedback-json.js";
import { FeedbackAnswer, FeedbackBody } from "./feedback-schemas.js";
import type { FeedbackStore } from "./feedback-store.js";

export interface FeedbackRoutesDeps {
  store: FeedbackStore;
  clock: Clock;
  /** Counts feedback in metrics, as the Kafka path does. */
  onFeedback?(rating: "up" | "down", result: "recorded" | "duplicate"): void;
}

export const feedbackRouteRoles: RouteRoles = {
  "POST /api/v1/feedback": "vote",
};

/** Users' votes on lessons; the latest vote moves the lesson's effective quality. */
export function registerFeedbackRoutes(scope: ApiScope, deps: FeedbackRoutesDeps, ctx: ApiContext): void {
  scope.post(
    "/api/v1/feedback",
    {
      schema: {
        summary: "Rate a lesson up or down",
        operationId: "recordFeedback",
        tags: ["feedback"],
        security: bearer,
        body: FeedbackBody,
        response: answers(
          {
            201: FeedbackAnswer.describe("recorded"),
            200: FeedbackAnswer.describe("the same feedback again: counted once"),
          },
          {
            404: "no such reflection for this tenant (another tenant's ids look absent)",
            409: "feedback_id already used for another reflection or rating",
          },
          { body: true },
        ),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const body = request.body;
      const result = await deps.store.recordFeedback(tenantId, {
        feedbackId: body.feedback_id ?? randomUUID(),
        reflectionId: body.reflection_id,
        rating: body.rating,
        comment: body.comment,
        userId: body.user_id,
        source: "http",
        at: deps.clock.now(),
      });
      // Another tenant's reflection id is indistinguishable from a missing one.
      if (result.status === "not_found") {
        return reply.code(404).send({ error: "not_found", message: `no reflection ${body.reflection_id}` });
      }
      if (result.status === "conflict") {
        return reply.code(409).send({
          error: "conflict",
          message: `feedback_id ${body.feedback_id ?? ""} was already used for reflection ${result.reflectionId} rated ${result.rating}`,
        });
      }
      deps.onFeedback?.(body.rating, result.status);
      return reply.code(result.status === "recorded" ? 201 : 200).send(feedbackJson(result));
    },
  );
}
