import { randomBytes } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { answers, bearer, type ApiContext, type ApiScope, type RouteRoles } from "../api-context.js";
import { ApprovalAnswer } from "./lesson-answers.js";
import { ReflectionIdParams } from "./lesson-schemas.js";
import type { LessonStore } from "./lesson-store.js";
import { auditActor } from "./split-routes.js";

export interface LessonApprovalRouteDeps {
  store: Pick<LessonStore, "approveForServing">;
  clock: { now(): Date };
  /** AUDIT_HMAC_KEY, as the split audit uses it; absent: a random key of this process. */
  auditKey?: string;
  /** Where the audit line of every approval is written. */
  logger?: { info(obj: object, msg: string): void };
}

/** Approving a lesson for every task of the tenant is an operator's decision, like a split. */
export const lessonApprovalRouteRoles: RouteRoles = {
  "POST /api/v1/reflections/:id/approve": "override",
};

function tokenOf(request: FastifyRequest): string {
  return /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1] ?? "";
}

/**
 * An operator's approval of a lesson for wide serving: with LESSONS_SERVE_MIN_OCCURRENCES above 1,
 * lessons for a task serve a lesson one trace wrote to other tasks once a second failure was filed
 * under it, or once an operator approved it here. Audited: the lesson keeps who (the keyed
 * fingerprint of the API key) and when, and the service's log gets a line.
 */
export function registerLessonApprovalRoute(
  scope: ApiScope,
  deps: LessonApprovalRouteDeps,
  ctx: ApiContext,
): void {
  const auditKey = deps.auditKey ?? randomBytes(32);
  scope.post(
    "/api/v1/reflections/:id/approve",
    {
      schema: {
        summary: "Approve a lesson for wide serving: lessons for a task serve it to other tasks at once",
        operationId: "approveReflection",
        tags: ["lessons"],
        security: bearer,
        params: ReflectionIdParams,
        response: answers({ 200: ApprovalAnswer }, { 404: "no such lesson for this tenant" }, { body: true }),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const { id } = request.params;
      if (!deps.store.approveForServing)
        return reply
          .code(503)
          .send({ error: "unavailable", message: "this server was built without lesson approval" });
      const actor = auditActor(tokenOf(request), auditKey);
      const approval = await deps.store.approveForServing(tenantId, id, actor, deps.clock.now());
      if (!approval)
        return reply.code(404).send({ error: "not_found", message: `no lesson ${id} for this tenant` });
      // The audit line, written to the service's logger (Fastify's own is off).
      deps.logger?.info(
        {
          audit: "lesson_approved",
          tenant: tenantId,
          actor,
          reflection_id: id,
          approved_at: approval.approvedAt.toISOString(),
          approved_by: approval.approvedBy,
        },
        "lesson approved for wide serving",
      );
      return {
        reflection_id: id,
        approved_at: approval.approvedAt.toISOString(),
        approved_by: approval.approvedBy,
        occurrences: approval.occurrences,
      };
    },
  );
}
