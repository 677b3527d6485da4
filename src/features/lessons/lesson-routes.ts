import type { CommonIssue } from "../../domain/evaluation/adaptive-insights.js";
import { refusalOf } from "../../domain/quality/lesson-screen.js";
import {
  answers,
  bearer,
  markDeprecated,
  type ApiContext,
  type ApiScope,
  type RouteRoles,
} from "../api-context.js";
import {
  InsightsAnswer,
  ReflectionsAnswer,
  SignatureAnswer,
  SignatureUnseen,
  SourcesAnswer,
} from "./lesson-answers.js";
import { reflectionJson, signatureJson } from "./lesson-json.js";
import { ReflectionIdParams, ReflectionsQuery, SignatureParams, SourcesQuery } from "./lesson-schemas.js";
import type { LessonStore } from "./lesson-store.js";
import type { LessonsForTask } from "./lessons-for-task.js";
import { lessonsForTaskRouteRoles, registerLessonsForTaskRoute } from "./lessons-for-task-routes.js";

export interface LessonRoutesDeps {
  store: LessonStore;
  commonIssues(tenantId: string): Promise<CommonIssue[]>;
  /** Lessons for a task (by meaning); without it the route answers 503. */
  forTask?: LessonsForTask | undefined;
  /** Requests one API key may make to lessons for a task a minute; more get 429 with Retry-After. */
  forTaskPerMinute: number;
}

export const lessonRouteRoles: RouteRoles = {
  "GET /api/v1/reflections": "read",
  "GET /api/v1/reflections/signatures/:signature": "read",
  "GET /api/v1/reflections/:id/sources": "read",
  "GET /api/v1/insights": "read",
  ...lessonsForTaskRouteRoles,
};

/** The stored lessons: search, lookup by error signature, and the tenant's common issues. */
export function registerLessonRoutes(scope: ApiScope, deps: LessonRoutesDeps, ctx: ApiContext): void {
  registerLessonsForTaskRoute(scope, deps.forTask, ctx, deps.forTaskPerMinute);
  scope.get(
    "/api/v1/reflections",
    {
      schema: {
        summary: "Search the tenant's stored lessons",
        operationId: "listReflections",
        tags: ["lessons"],
        security: bearer,
        querystring: ReflectionsQuery,
        response: answers({ 200: ReflectionsAnswer }),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const query = request.query;
      if (query.k !== undefined) markDeprecated(reply);
      const limit = query.limit ?? query.k ?? 10;
      // Withheld lessons are the ones feedback or outcomes took out of service: an operator's view.
      if (query.include_withheld === "true") ctx.requireRole(request, "override");
      const { items, hasMore } = await deps.store.searchReflections(tenantId, {
        text: query.q,
        projectId: query.project,
        tags: query.tags,
        minImportance: query.min_importance,
        limit,
        offset: query.offset,
        includeWithheld: query.include_withheld === "true",
      });
      return {
        items: items.map(reflectionJson),
        limit,
        k: limit,
        offset: query.offset,
        next_offset: hasMore ? query.offset + limit : null,
      };
    },
  );

  scope.get(
    "/api/v1/reflections/:id/sources",
    {
      schema: {
        summary: "The failures a lesson stands for (written for, reused by, merged into it)",
        operationId: "listReflectionSources",
        tags: ["lessons"],
        security: bearer,
        params: ReflectionIdParams,
        querystring: SourcesQuery,
        response: answers({ 200: SourcesAnswer }, { 404: "no such lesson for this tenant" }),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const { id } = request.params;
      if (request.query.k !== undefined) markDeprecated(reply);
      const limit = request.query.limit ?? request.query.k ?? 100;
      const sources = await deps.store.sourcesOf(tenantId, id, limit);
      if (!sources)
        return reply.code(404).send({ error: "not_found", message: `no lesson ${id} for this tenant` });
      return {
        reflection_id: id,
        sources: sources.map((s) => ({
          event_id: s.eventId,
          loop_id: s.loopId,
          signature: s.signature,
          processed_at: s.processedAt.toISOString(),
        })),
      };
    },
  );

  scope.get(
    "/api/v1/reflections/signatures/:signature",
    {
      schema: {
        summary: "Has this error signature been seen, and what is its lesson?",
        operationId: "getSignature",
        tags: ["lessons"],
        security: bearer,
        params: SignatureParams,
        response: answers({ 200: SignatureAnswer }, { 404: SignatureUnseen }),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const { signature } = request.params;
      const found = await deps.store.findBySignature(tenantId, signature);
      if (!found) {
        // "Have I seen this error before?" has an answer here too: no, never seen (for this tenant).
        return reply.code(404).send({
          error: "not_found",
          message: `signature ${signature} has not been seen for this tenant`,
          signature,
          seen_before: false,
          occurrences: 0,
        });
      }
      return signatureJson(signature, found);
    },
  );

  scope.get(
    "/api/v1/insights",
    {
      schema: {
        summary: "Common issues of the tenant's recent low-quality reflections",
        operationId: "getInsights",
        tags: ["lessons"],
        security: bearer,
        response: answers({ 200: InsightsAnswer }),
      },
    },
    async (request) => {
      const tenantId = ctx.tenantOf(request);
      const issues = await deps.commonIssues(tenantId);
      // An issue may be the answer evaluator's free text, which a trace can steer: screened like a
      // lesson's instruction, and withheld when the screen refuses it.
      return {
        tenant_id: tenantId,
        common_issues: issues.map((i) =>
          refusalOf(i.issue) === null ? i : { ...i, issue: "(withheld: the lesson screen refuses its text)" },
        ),
      };
    },
  );
}
