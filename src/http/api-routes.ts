import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { Outcome, type Attribution } from "../domain/contracts/index.js";
import { boundedName, storableText } from "../domain/contracts/task-completed.js";
import type { CommonIssue } from "../domain/evaluation/adaptive-insights.js";
import type { PgApiStore, ReflectionView } from "../adapters/postgres/pg-api-store.js";
import { servedMinQuality } from "../domain/feedback/effective-quality.js";
import type { LoopCompleter } from "../pipeline/complete-loop.js";
import { classifyFailure } from "../domain/errors.js";
import type { Logger } from "../observability/logger.js";
import type { ApiGrant, ApiKeyring, ApiRole } from "./api-keys.js";

export interface ApiRoutesDeps {
  keys: ApiKeyring;
  store: PgApiStore;
  completeLoop: LoopCompleter;
  commonIssues(tenantId: string): Promise<CommonIssue[]>;
  clock: { now(): Date };
  /** Where request failures are logged (once, here). */
  logger?: Pick<Logger, "warn" | "error">;
  /** Counts feedback in metrics, as the Kafka path does. */
  onFeedback?(rating: "up" | "down", result: "recorded" | "duplicate"): void;
}

// Names refuse control characters and lone surrogates; free text is made storable (no NUL byte).
const id = boundedName(200);
const unit = z.number().min(0).max(1);

export const LoopCompleteBody = z.strictObject({
  loop_id: id,
  project_id: id.default("default"),
  rerun_of: id.optional(),
  reflection_status: z.enum(["done", "failed"]).default("done"),
  outcome: Outcome.optional(),
  alignment_score: unit.optional(),
  drift_score: unit.optional(),
  bias_tags: z.array(boundedName(100)).max(100).default([]),
  orchestrator_persona: boundedName(100).optional(),
  reflection_persona: boundedName(100).optional(),
  task: storableText(16_000).pipe(z.string().min(1)).optional(),
  override_fatigue: z.boolean().default(false),
  override_max_reruns: z.boolean().default(false),
  override_by: boundedName(200).nullable().default(null),
});

export const OverrideBody = z.strictObject({
  override_fatigue: z.boolean().default(false),
  override_max_reruns: z.boolean().default(false),
  override_by: boundedName(200).nullable().default(null),
  override_reason: storableText(2_000).pipe(z.string().min(1)).nullable().default(null),
});

const csvList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().max(100)).max(20));

/** Query-string numbers arrive as text: an empty or non-numeric value is an error, never 0. */
const numeric = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?$/, "must be a number")
  .transform(Number);

export const ReflectionsQuery = z.strictObject({
  q: z.string().max(500).optional(),
  tags: csvList.default([]),
  min_importance: numeric.pipe(z.number().min(0).max(1)).default(0),
  k: numeric.pipe(z.number().int().min(1).max(100)).default(10),
  offset: numeric.pipe(z.number().int().min(0).max(10_000)).default(0),
  include_withheld: z.enum(["true", "false"]).default("false"),
});

export const FeedbackBody = z.strictObject({
  reflection_id: z.uuid(),
  rating: z.enum(["up", "down"]),
  comment: storableText(2_000).nullable().default(null),
  feedback_id: id.optional(),
  user_id: id.nullable().default(null),
});

/** A reflection's attribution as the API shows it; the schema documents it in the OpenAPI document. */
export const AttributionJson = z
  .object({
    event_id: z.string().optional().describe("eventId of the trace step held responsible"),
    step_index: z.number().int().min(0).optional().describe("zero-based position of that step in the trace"),
    actor: z.string().optional().describe("the agent that produced the step"),
    tool_name: z.string().optional(),
    confidence: z.number().min(0).max(1),
    evidence: z.string().optional().describe("a short quote of the step, or the reason it was chosen"),
  })
  .describe("Where the failure went wrong and which agent did it; null for successes and older lessons.");

export function attributionJson(attribution: Attribution | null | undefined) {
  if (!attribution) return null;
  return {
    ...(attribution.eventId !== undefined ? { event_id: attribution.eventId } : {}),
    ...(attribution.stepIndex !== undefined ? { step_index: attribution.stepIndex } : {}),
    ...(attribution.actor !== undefined ? { actor: attribution.actor } : {}),
    ...(attribution.toolName !== undefined ? { tool_name: attribution.toolName } : {}),
    confidence: attribution.confidence,
    ...(attribution.evidence !== undefined ? { evidence: attribution.evidence } : {}),
  };
}

/** A stored lesson as the API shows it (snake_case like the orchestrator endpoints). */
export function reflectionJson(view: ReflectionView) {
  return {
    id: view.id,
    signature: view.signature,
    project_id: view.projectId,
    reflection_text: view.reflectionText,
    strategy_text: view.strategyText,
    learning: view.learning,
    importance: view.importance,
    confidence: view.confidence,
    judged_quality: view.judgedQuality,
    effective_quality: view.effectiveQuality,
    served: view.served,
    verdict: view.verdict,
    tags: view.tags,
    error_category: view.errorCategory,
    attribution: attributionJson(view.attribution),
    occurrences: view.occurrences,
    first_seen_at: view.firstSeenAt,
    last_seen_at: view.lastSeenAt,
    feedback: {
      helpful: view.feedback.helpful,
      harmful: view.feedback.harmful,
      latest_rating: view.feedback.latestRating,
    },
    effectiveness: effectivenessJson(view.effectiveness),
    rank: view.rank,
  };
}

function effectivenessJson(e: ReflectionView["effectiveness"]) {
  return {
    recurrences_after_publication: e.recurrencesAfterPublication,
    days_since_publication: e.daysSincePublication,
    recurrences_per_week: e.recurrencesPerWeek,
    verdict: e.verdict,
  };
}

const LoopIdParams = z.strictObject({ loopId: id });
const SignatureParams = z.strictObject({ signature: z.string().regex(/^[A-Za-z0-9:_.-]{1,200}$/) });

class BadRequest extends Error {
  constructor(readonly issues: string[]) {
    super(issues.join("; "));
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  throw new BadRequest(
    result.error.issues.map((i) => `${where}${i.path.length ? "." + i.path.join(".") : ""}: ${i.message}`),
  );
}

/** The OpenAPI 3.1 document, its schemas generated from the same zod schemas the routes validate with. */
export function openApiDocument() {
  const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  const secured = [{ bearer: [] }];
  const body = (schema: z.ZodType) => ({
    required: true,
    content: { "application/json": { schema: json(schema) } },
  });
  const queryParams = [
    {
      name: "q",
      in: "query",
      description: "words that must all appear",
      schema: { type: "string", maxLength: 500 },
    },
    { name: "tags", in: "query", description: "comma-separated; all must match", schema: { type: "string" } },
    { name: "min_importance", in: "query", schema: { type: "number", minimum: 0, maximum: 1, default: 0 } },
    { name: "k", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 10 } },
    { name: "offset", in: "query", schema: { type: "integer", minimum: 0, maximum: 10_000, default: 0 } },
    {
      name: "include_withheld",
      in: "query",
      description: `also list lessons whose effective quality is below ${String(servedMinQuality)}`,
      schema: { type: "string", enum: ["true", "false"], default: "false" },
    },
  ];
  const ok = {
    "200": { description: "OK" },
    "400": { description: "invalid request" },
    "401": { description: "no or unknown API key" },
  };
  const notFound = { "404": { description: "not found for this tenant (another tenant's ids look absent)" } };
  return {
    openapi: "3.1.0",
    info: { title: "Reflector API", version: "1" },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Attribution: { ...json(AttributionJson), type: ["object", "null"] } },
    },
    paths: {
      "/healthz": { get: { responses: { "200": { description: "alive" } } } },
      "/openapi.json": { get: { responses: { "200": { description: "this document" } } } },
      "/readyz": {
        get: { responses: { "200": { description: "ready" }, "503": { description: "not ready" } } },
      },
      "/metrics": { get: { responses: { "200": { description: "Prometheus metrics" } } } },
      "/orchestrator/loop-complete": {
        post: { security: secured, requestBody: body(LoopCompleteBody), responses: ok },
      },
      "/orchestrator/guardrails-status/{loopId}": {
        get: {
          security: secured,
          parameters: [{ name: "loopId", in: "path", required: true, schema: { type: "string" } }],
          responses: { ...ok, ...notFound },
        },
      },
      "/orchestrator/override-guardrails/{loopId}": {
        post: {
          security: secured,
          parameters: [{ name: "loopId", in: "path", required: true, schema: { type: "string" } }],
          requestBody: body(OverrideBody),
          responses: ok,
        },
      },
      "/api/v1/reflections": {
        get: {
          security: secured,
          parameters: queryParams,
          responses: {
            ...ok,
            "200": {
              description:
                "OK: `items` are stored lessons; each has `attribution` (components/schemas/Attribution), null for successes",
            },
          },
        },
      },
      "/api/v1/reflections/signatures/{signature}": {
        get: {
          security: secured,
          parameters: [{ name: "signature", in: "path", required: true, schema: { type: "string" } }],
          responses: { ...ok, ...notFound },
        },
      },
      "/api/v1/insights": { get: { security: secured, responses: ok } },
      "/api/v1/feedback": {
        post: {
          security: secured,
          requestBody: body(FeedbackBody),
          responses: {
            ...ok,
            "201": { description: "recorded" },
            ...notFound,
            "409": { description: "feedback_id already used for another reflection or rating" },
          },
        },
      },
    },
  };
}

/**
 * The orchestrator endpoints and the query/feedback API. The caller's tenant comes only
 * from its bearer key, never from the request, and every store call is scoped to it.
 */
/** The role each authenticated route needs; a route missing here is refused to every key. */
export const routeRoles: Readonly<Record<string, ApiRole>> = {
  "POST /orchestrator/loop-complete": "decide",
  "GET /orchestrator/guardrails-status/:loopId": "read",
  "POST /orchestrator/override-guardrails/:loopId": "override",
  "GET /api/v1/reflections": "read",
  "GET /api/v1/reflections/signatures/:signature": "read",
  "GET /api/v1/insights": "read",
  "POST /api/v1/feedback": "vote",
};

class Forbidden extends Error {
  constructor(role: ApiRole) {
    super(`this API key may not ${role}`);
  }
}

export function registerApiRoutes(app: FastifyInstance, deps: ApiRoutesDeps): void {
  const document = openApiDocument();
  app.get("/openapi.json", () => document);

  const grants = new WeakMap<FastifyRequest, ApiGrant>();
  const tenantOf = (request: FastifyRequest): string => {
    const grant = grants.get(request);
    if (grant === undefined) throw new Error("route registered without authentication");
    return grant.tenant;
  };
  /** A further role a request needs for what its body asks (overrides on loop-complete). */
  const requireRole = (request: FastifyRequest, role: ApiRole): void => {
    if (!grants.get(request)?.roles.has(role)) throw new Forbidden(role);
  };

  app.register((scope, _opts, done) => {
    scope.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
      const header = request.headers.authorization ?? "";
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      const grant = match?.[1] ? deps.keys.grantFor(match[1]) : null;
      if (grant === null) {
        await reply
          .code(401)
          .header("www-authenticate", "Bearer")
          .send({ error: "unauthorized", message: match ? "unknown API key" : "missing bearer API key" });
        return reply;
      }
      // Every route names the role it needs (routeRoles); one it does not name is refused.
      const role = routeRoles[`${request.method} ${request.routeOptions.url ?? ""}`];
      if (role === undefined || !grant.roles.has(role)) {
        await reply.code(403).send({
          error: "forbidden",
          message: role ? `this API key may not ${role}` : "this route grants no role",
        });
        return reply;
      }
      grants.set(request, grant);
      return undefined;
    });

    scope.setErrorHandler(async (err: unknown, _request, reply) => {
      if (err instanceof Forbidden) {
        return reply.code(403).send({ error: "forbidden", message: err.message });
      }
      if (err instanceof BadRequest) {
        return reply.code(400).send({ error: "bad_request", message: err.message, issues: err.issues });
      }
      const status = (err as { statusCode?: unknown }).statusCode;
      if (typeof status === "number" && status >= 400 && status < 500) {
        return reply.code(status).send({ error: "bad_request", message: (err as Error).message, issues: [] });
      }
      // Data Postgres refuses (a NUL byte, a value out of range) is the request's fault.
      if (classifyFailure(err) === "dead-letter") {
        return reply.code(400).send({ error: "bad_request", message: (err as Error).message, issues: [] });
      }
      // An outage (Postgres, Kafka) is the caller's cue to retry; anything else is a bug.
      if (classifyFailure(err) === "retry") {
        deps.logger?.warn({ err }, "api request failed: dependency unavailable");
        return reply
          .code(503)
          .header("retry-after", "5")
          .send({ error: "unavailable", message: "a dependency is unavailable; retry later" });
      }
      deps.logger?.error({ err }, "api request failed");
      return reply.code(500).send({ error: "internal", message: "internal error" });
    });

    scope.post("/orchestrator/loop-complete", async (request) => {
      const tenantId = tenantOf(request);
      const body = parse(LoopCompleteBody, request.body, "body");
      if (body.override_fatigue || body.override_max_reruns) {
        requireRole(request, "override");
        await deps.store.setOverride(tenantId, body.loop_id, {
          overrideFatigue: body.override_fatigue,
          overrideMaxReruns: body.override_max_reruns,
          overriddenBy: body.override_by,
          overrideReason: null,
        });
      }
      const { decision, committed } = await deps.completeLoop({
        tenantId,
        projectId: body.project_id,
        loopId: body.loop_id,
        rerunOf: body.rerun_of,
        outcome: body.outcome ?? (body.reflection_status === "done" ? "success" : "failure"),
        alignment: body.alignment_score,
        drift: body.drift_score,
        biasTags: body.bias_tags,
        orchestratorPersona: body.orchestrator_persona,
        reflectionPersona: body.reflection_persona,
        taskDescription: body.task,
      });
      return {
        status: "success",
        loop_id: body.loop_id,
        replayed: !committed,
        reflection_result: {
          alignment_score: decision.alignment,
          drift_score: decision.drift,
          summary_valid: body.reflection_status === "done",
          reflection_persona: body.reflection_persona ?? null,
          bias_echo: decision.biasEcho,
          repeated_tags: decision.repeatedTags,
          reflection_fatigue: decision.fatigue,
        },
        decision_result: {
          decision: decision.decision,
          original_loop_id: decision.loopId,
          root_loop_id: decision.rootLoopId,
          new_loop_id: decision.newLoopId,
          rerun_reason: decision.reason,
          rerun_reason_detail: decision.reasonDetail,
          rerun_trigger: decision.triggers,
          rerun_number: decision.decision === "rerun" ? decision.rerunCount : null,
          rerun_count: decision.rerunCount,
          max_reruns: decision.maxReruns,
          force_finalize: decision.forceFinalize,
          overridden_by: decision.overriddenBy,
        },
        orchestrator_persona: body.orchestrator_persona ?? null,
        timestamp: decision.decidedAt,
      };
    });

    scope.get("/orchestrator/guardrails-status/:loopId", async (request, reply) => {
      const tenantId = tenantOf(request);
      const { loopId } = parse(LoopIdParams, request.params, "params");
      const [trace, override] = await Promise.all([
        deps.store.guardrailsStatus(tenantId, loopId),
        deps.store.findOverride(tenantId, loopId),
      ]);
      if (!trace && !override) {
        return reply.code(404).send({ error: "not_found", message: `no loop ${loopId} for this tenant` });
      }
      return {
        status: "success",
        guardrails_status: {
          loop_id: loopId,
          root_loop_id: trace?.rootLoopId ?? null,
          decision: trace?.decision ?? null,
          new_loop_id: trace?.newLoopId ?? null,
          rerun_count: trace?.rerunCount ?? 0,
          max_reruns: trace?.maxReruns ?? null,
          rerun_limit_reached: trace ? trace.rerunCount >= trace.maxReruns : false,
          bias_echo: trace?.biasEcho ?? false,
          repeated_tags: trace?.repeatedTags ?? [],
          reflection_fatigue: trace?.reflectionFatigue ?? 0,
          fatigue_increased: trace?.fatigueIncreased ?? false,
          fatigue_threshold_exceeded: trace?.rerunReason === "reflection_fatigue",
          force_finalize: trace?.forceFinalize ?? false,
          rerun_reason: trace?.rerunReason ?? null,
          rerun_reason_detail: trace?.rerunReasonDetail ?? null,
          rerun_trigger: trace?.rerunTrigger ?? [],
          alignment_score: trace?.alignment ?? null,
          drift_score: trace?.drift ?? null,
          summary_valid: trace ? trace.outcome === "success" : null,
          orchestrator_persona: trace?.orchestratorPersona ?? null,
          reflection_persona: trace?.reflectionPersona ?? null,
          overridden_by: trace?.overriddenBy ?? null,
          pending_override: override
            ? {
                override_fatigue: override.overrideFatigue,
                override_max_reruns: override.overrideMaxReruns,
                overridden_by: override.overriddenBy,
                override_reason: override.overrideReason,
              }
            : null,
          decided_at: trace?.decidedAt ?? null,
        },
      };
    });

    scope.post("/orchestrator/override-guardrails/:loopId", async (request) => {
      const tenantId = tenantOf(request);
      const { loopId } = parse(LoopIdParams, request.params, "params");
      const body = parse(OverrideBody, request.body, "body");
      const stored = await deps.store.setOverride(tenantId, loopId, {
        overrideFatigue: body.override_fatigue,
        overrideMaxReruns: body.override_max_reruns,
        overriddenBy: body.override_by,
        overrideReason: body.override_reason,
      });
      return {
        status: "success",
        loop_id: loopId,
        override_fatigue: stored.overrideFatigue,
        override_max_reruns: stored.overrideMaxReruns,
        overridden_by: stored.overriddenBy,
        override_reason: stored.overrideReason,
      };
    });

    scope.get("/api/v1/reflections", async (request) => {
      const tenantId = tenantOf(request);
      const query = parse(ReflectionsQuery, request.query, "query");
      const { items, hasMore } = await deps.store.searchReflections(tenantId, {
        text: query.q,
        tags: query.tags,
        minImportance: query.min_importance,
        limit: query.k,
        offset: query.offset,
        includeWithheld: query.include_withheld === "true",
      });
      return {
        items: items.map(reflectionJson),
        k: query.k,
        offset: query.offset,
        next_offset: hasMore ? query.offset + query.k : null,
      };
    });

    scope.get("/api/v1/reflections/signatures/:signature", async (request, reply) => {
      const tenantId = tenantOf(request);
      const { signature } = parse(SignatureParams, request.params, "params");
      const found = await deps.store.findBySignature(tenantId, signature);
      if (!found) {
        // "Have I seen this error before?" has an answer here too: no, never (for this tenant).
        return reply.code(404).send({
          error: "not_found",
          message: `signature ${signature} has not been seen for this tenant`,
          signature,
          seen_before: false,
          occurrences: 0,
        });
      }
      return {
        signature,
        seen_before: true,
        occurrences: found.occurrences,
        first_seen_at: found.firstSeenAt,
        last_seen_at: found.lastSeenAt,
        // A lesson users rated down below the serving floor is withheld, not handed out as advice.
        lesson: found.served
          ? {
              reflection_id: found.id,
              learning: found.learning,
              strategy: found.strategyText,
              reflection_text: found.reflectionText,
              judged_quality: found.judgedQuality,
              effective_quality: found.effectiveQuality,
              attribution: attributionJson(found.attribution),
            }
          : null,
        lesson_withheld: found.served
          ? null
          : {
              reflection_id: found.id,
              reason: `effective quality ${found.effectiveQuality.toFixed(2)} after user feedback is below ${String(servedMinQuality)}`,
              judged_quality: found.judgedQuality,
              effective_quality: found.effectiveQuality,
            },
        feedback: {
          helpful: found.feedback.helpful,
          harmful: found.feedback.harmful,
          latest_rating: found.feedback.latestRating,
        },
        effectiveness: effectivenessJson(found.effectiveness),
      };
    });

    scope.get("/api/v1/insights", async (request) => {
      const tenantId = tenantOf(request);
      const issues = await deps.commonIssues(tenantId);
      return { tenant_id: tenantId, common_issues: issues };
    });

    scope.post("/api/v1/feedback", async (request, reply) => {
      const tenantId = tenantOf(request);
      const body = parse(FeedbackBody, request.body, "body");
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
      return reply.code(result.status === "recorded" ? 201 : 200).send({
        status: result.status,
        reflection_id: result.reflectionId,
        judged_quality: result.judgedQuality,
        effective_quality: result.effectiveQuality,
        served: result.served,
        feedback: { helpful: result.helpful, harmful: result.harmful, latest_rating: result.latestRating },
      });
    });

    done();
  });
}
