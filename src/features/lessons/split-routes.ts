import { createHmac, randomBytes } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import {
  checkSourceIds,
  maxSplitAuditRows,
  maxSplitSources,
  splitRefusal,
  type LessonSplitStore,
  type SplitRecord,
} from "../../domain/memory/lesson-split.js";
import {
  answers,
  bearer,
  ProblemJson,
  type ApiContext,
  type ApiScope,
  type RouteRoles,
} from "../api-context.js";
import { SplitAnswer, SplitsAnswer } from "./lesson-answers.js";
import { ReflectionIdParams } from "./lesson-schemas.js";

export interface LessonSplitRoutesDeps {
  /** Absent where the server was built without one (tests of other routes): the route answers 503. */
  store: LessonSplitStore | undefined;
  /**
   * The secret the audit's actor fingerprints are keyed with (AUDIT_HMAC_KEY), so a fingerprint
   * cannot be matched against guessed keys offline. Absent: a random key of this process (its
   * fingerprints then match only within it).
   */
  auditKey?: string;
  /** Where the audit line of every split is written. */
  logger?: { info(obj: object, msg: string): void };
}

/** Splitting a merge changes what memory reuses: an operator's role, like a loop override. */
export const lessonSplitRouteRoles: RouteRoles = {
  "POST /api/v1/reflections/:id/split": "override",
  "GET /api/v1/reflections/splits": "read",
};

export const SplitAuditQueryString = z.strictObject({
  reflection_id: z
    .uuid()
    .optional()
    .describe("only the splits of this lesson (the one split, or the one split into)"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxSplitAuditRows)
    .default(50)
    .describe(`newest first, at most this many (1 to ${String(maxSplitAuditRows)}, default 50)`),
});

/**
 * Who asked for a split, as the audit records it: a fingerprint of the request's API key, never the
 * key itself. An HMAC-SHA256 under the audit key, 128 bits of it: a plain hash of a key, and a
 * short one, lets whoever reads the audit test guessed keys against it offline.
 */
export function auditActor(token: string, auditKey: string | Buffer): string {
  return `api-key:${createHmac("sha256", auditKey).update(token).digest("base64url").slice(0, 22)}`;
}

function actorOf(request: FastifyRequest, auditKey: string | Buffer): string {
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1] ?? "";
  return auditActor(token, auditKey);
}

export const SplitBody = z.strictObject({
  source_event_ids: z
    .array(z.string())
    .min(1)
    .max(maxSplitSources)
    .describe(
      `the lesson's sources to move out (event ids from its sources), 1 to ${String(maxSplitSources)}`,
    ),
  to: z
    .enum(["new_lesson", "unassigned"])
    .default("new_lesson")
    .describe("a lesson of their own (a copy of this one's text), or no lesson (default new_lesson)"),
});

/** The audit of splits, as the API answers it. */
function splitJson(r: SplitRecord) {
  return {
    id: r.id,
    reflection_id: r.lessonId,
    new_reflection_id: r.newLessonId,
    to: r.to,
    moved_event_ids: r.moved,
    moved_signatures: r.signaturesMoved,
    remaining_sources: r.remaining,
    actor: r.actor,
    split_at: r.at.toISOString(),
  };
}

/** Moves named source failures out of a lesson that merged different causes. */
export function registerLessonSplitRoute(
  scope: ApiScope,
  deps: LessonSplitRoutesDeps,
  ctx: ApiContext,
): void {
  const auditKey = deps.auditKey ?? randomBytes(32);
  scope.post(
    "/api/v1/reflections/:id/split",
    {
      schema: {
        summary: "Move source failures out of a lesson that merged different causes",
        operationId: "splitReflection",
        tags: ["lessons"],
        security: bearer,
        params: ReflectionIdParams,
        body: SplitBody,
        response: answers(
          { 200: SplitAnswer },
          {
            400: ProblemJson.extend({ missing: z.array(z.string()).optional() }).describe(
              "invalid request, or ids that are not the lesson's sources (`missing`)",
            ),
            404: "no such lesson for this tenant",
            409: "every source was named: the lesson would stand for nothing",
          },
          { body: true },
        ),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const { id } = request.params;
      if (!deps.store)
        return reply
          .code(503)
          .send({ error: "unavailable", message: "this server was built without lesson splitting" });
      const checked = checkSourceIds(request.body.source_event_ids);
      if ("error" in checked)
        return reply
          .code(400)
          .send({ error: "invalid_request", message: checked.error, issues: [checked.error] });
      const result = await deps.store.splitSources({
        tenantId,
        lessonId: id,
        eventIds: checked.ids,
        to: request.body.to,
        actor: actorOf(request, auditKey),
      });
      const refused = splitRefusal(result, id);
      if (result.status !== "split" || refused !== null) {
        const code = result.status === "not_found" ? 404 : result.status === "not_sources" ? 400 : 409;
        return reply.code(code).send({
          error: result.status,
          message: refused,
          ...(result.status === "not_sources" ? { missing: result.missing } : {}),
        });
      }
      // The audit record of the split: who, which lesson, which failures, where to. Written to the
      // service's logger (Fastify's own is off, so `request.log` would write nothing).
      deps.logger?.info(
        {
          audit: "lesson_split",
          tenant: tenantId,
          actor: actorOf(request, auditKey),
          reflection_id: id,
          moved: result.moved,
          to: request.body.to,
          new_reflection_id: result.newLessonId,
          moved_signatures: result.signaturesMoved,
        },
        "lesson split",
      );
      return {
        reflection_id: id,
        new_reflection_id: result.newLessonId,
        moved_event_ids: result.moved,
        remaining_sources: result.remaining,
        moved_signatures: result.signaturesMoved,
      };
    },
  );

  scope.get(
    "/api/v1/reflections/splits",
    {
      schema: {
        summary: "The audit of lesson splits: who split which lesson when, and which sources moved where",
        operationId: "listReflectionSplits",
        tags: ["lessons"],
        security: bearer,
        querystring: SplitAuditQueryString,
        response: answers({ 200: SplitsAnswer }),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      if (!deps.store)
        return reply
          .code(503)
          .send({ error: "unavailable", message: "this server was built without lesson splitting" });
      const { reflection_id: lessonId, limit } = request.query;
      const splits = await deps.store.listSplits(tenantId, { ...(lessonId ? { lessonId } : {}), limit });
      return { splits: splits.map(splitJson) };
    },
  );
}
