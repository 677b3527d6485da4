import { z } from "zod";
import { servedMinQuality } from "../../domain/feedback/effective-quality.js";
import {
  answers,
  bearer,
  notFoundForTenant,
  type ApiContext,
  type ApiScope,
  type RouteRoles,
} from "../api-context.js";
import type { StrategyStore, StrategyView } from "./strategy-store.js";

/** Query-string numbers arrive as text: an empty or non-numeric value is an error, never 0. */
const numeric = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?$/, "must be a number")
  .transform(Number);

const csvList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().max(100)).max(20));

/** `GET /api/v1/strategies`: the specification's memory query over strategies. */
export const StrategiesQuery = z.strictObject({
  q: z.string().max(500).optional().describe("words that must all appear in the strategy"),
  project_id: z.string().min(1).max(200).optional().describe("only strategies of this project"),
  tags: csvList.default([]).describe("comma-separated; all must be present (at most 20)"),
  min_importance: numeric
    .pipe(z.number().min(0).max(1))
    .default(0.5)
    .describe("the strategy's importance, 0 to 1 (default 0.5)"),
  limit: numeric
    .pipe(z.number().int().min(1).max(100))
    .default(5)
    .describe("page size, 1 to 100 (default 5)"),
  offset: numeric
    .pipe(z.number().int().min(0).max(10_000))
    .default(0)
    .describe("strategies to skip, 0 to 10,000 (default 0)"),
  include_withheld: z
    .enum(["true", "false"])
    .default("false")
    .describe(
      `also strategies whose lesson's effective quality is below ${String(servedMinQuality)} (override role)`,
    ),
});

export const StrategyIdParams = z.strictObject({ strategy_id: z.uuid() });

/** One strategy as the API shows it. */
export const StrategyJson = z.object({
  strategy_id: z.uuid(),
  reflection_id: z.uuid().describe("the lesson the strategy was stored with"),
  project_id: z.string(),
  strategy_text: z.string(),
  importance: z.number().min(0).max(1).describe("the lesson's importance raised by 10 %, at most 1"),
  tags: z.array(z.string()).describe("the lesson's tags and `strategy`"),
  created_at: z.string(),
  lesson: z.object({
    signature: z.string(),
    effective_quality: z.number(),
    served: z.boolean().describe(`false when feedback took the lesson below ${String(servedMinQuality)}`),
  }),
  rank: z.number().nullable().describe("full-text rank of `q`; null without it"),
});

/** The 200 answer of `GET /api/v1/strategies`. */
export const StrategiesAnswer = z.object({
  items: z.array(StrategyJson),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable().describe("null on the last page"),
});

export const strategyRouteRoles: RouteRoles = {
  "GET /api/v1/strategies": "read",
  "GET /api/v1/strategies/:strategy_id": "read",
};

export function strategyJson(view: StrategyView): z.infer<typeof StrategyJson> {
  return {
    strategy_id: view.id,
    reflection_id: view.reflectionId,
    project_id: view.projectId,
    strategy_text: view.strategyText,
    importance: view.importance,
    tags: view.tags,
    created_at: view.createdAt,
    lesson: {
      signature: view.lesson.signature,
      effective_quality: view.lesson.effectiveQuality,
      served: view.lesson.served,
    },
    rank: view.rank,
  };
}

const unavailable = { error: "unavailable", message: "strategies are not available" };

/**
 * Strategies as memories (docs/specification.md#strategy-importance): the tenant's strategies
 * searched as the specification queries its memories (a project, words, 5 of them, importance at
 * least 0.5, tags), and one by id.
 */
export function registerStrategyRoutes(
  scope: ApiScope,
  deps: { store: StrategyStore | undefined },
  ctx: ApiContext,
): void {
  scope.get(
    "/api/v1/strategies",
    {
      schema: {
        summary: "Search the tenant's strategies (each lesson's strategy, a memory of its own)",
        operationId: "listStrategies",
        tags: ["strategies"],
        security: bearer,
        querystring: StrategiesQuery,
        response: answers({ 200: StrategiesAnswer.describe("`items` are strategies, best first") }),
      },
    },
    async (request, reply) => {
      if (!deps.store) return reply.code(503).header("retry-after", "5").send(unavailable);
      const tenantId = ctx.tenantOf(request);
      const query = request.query;
      // Withheld lessons are the ones feedback or outcomes took out of service: an operator's view.
      if (query.include_withheld === "true") ctx.requireRole(request, "override");
      const { items, hasMore } = await deps.store.searchStrategies(tenantId, {
        text: query.q,
        projectId: query.project_id,
        tags: query.tags,
        minImportance: query.min_importance,
        limit: query.limit,
        offset: query.offset,
        includeWithheld: query.include_withheld === "true",
      });
      const answer: z.infer<typeof StrategiesAnswer> = {
        items: items.map(strategyJson),
        limit: query.limit,
        offset: query.offset,
        next_offset: hasMore ? query.offset + query.limit : null,
      };
      return answer;
    },
  );

  scope.get(
    "/api/v1/strategies/:strategy_id",
    {
      schema: {
        summary: "One strategy of the tenant",
        operationId: "getStrategy",
        tags: ["strategies"],
        security: bearer,
        params: StrategyIdParams,
        response: answers({ 200: StrategyJson.describe("the strategy") }, { 404: notFoundForTenant }),
      },
    },
    async (request, reply) => {
      if (!deps.store) return reply.code(503).header("retry-after", "5").send(unavailable);
      const tenantId = ctx.tenantOf(request);
      const found = await deps.store.strategyById(tenantId, request.params.strategy_id);
      if (!found) {
        return reply
          .code(404)
          .send({ error: "not_found", message: `no strategy ${request.params.strategy_id}` });
      }
      return strategyJson(found);
    },
  );
}
