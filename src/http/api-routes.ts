import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors, type ZodTypeProvider } from "fastify-type-provider-zod";
import { classifyFailure } from "../domain/errors.js";
import {
  feedbackRouteRoles,
  registerFeedbackRoutes,
  type FeedbackRoutesDeps,
} from "../features/feedback/feedback-routes.js";
import {
  answerFeedbackRouteRoles,
  registerAnswerFeedbackRoute,
} from "../features/feedback/answer-feedback-routes.js";
import {
  lessonRouteRoles,
  registerLessonRoutes,
  type LessonRoutesDeps,
} from "../features/lessons/lesson-routes.js";
import { defaultGuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { loopRouteRoles, registerLoopRoutes, type LoopRoutesDeps } from "../features/loops/loop-routes.js";
import {
  lessonApprovalRouteRoles,
  registerLessonApprovalRoute,
} from "../features/lessons/approval-routes.js";
import {
  lessonSplitRouteRoles,
  registerLessonSplitRoute,
  type LessonSplitRoutesDeps,
} from "../features/lessons/split-routes.js";
import { registerStrategyRoutes, strategyRouteRoles } from "../features/strategies/strategy-routes.js";
import type { StrategyStore } from "../features/strategies/strategy-store.js";
import type { Logger } from "../observability/logger.js";
import {
  reflectRouteRoles,
  registerReflectRoutes,
  type ReflectRouteDeps,
} from "../features/reflect/reflect-routes.js";
import { Forbidden, type ApiContext, type ApiScope } from "../features/api-context.js";
import type { ApiGrant, ApiKeyring, ApiRole } from "./api-keys.js";
import { createAuthThrottle, type AuthThrottle } from "./auth-throttle.js";
import { createRateLimit, credentialOf } from "./rate-limit.js";
import { otlpRouteRoles, registerOtlpRoute, type OtlpHttpIngest } from "./otlp-route.js";
import { problemTypes } from "./problem-details.js";

export interface ApiRoutesDeps {
  keys: ApiKeyring;
  /** The features' stores, each behind its port. */
  stores: {
    loops: LoopRoutesDeps["store"];
    lessons: LessonRoutesDeps["store"];
    feedback: FeedbackRoutesDeps["store"];
    /** Splitting a merged lesson; without it the split route answers 503. */
    lessonSplits?: LessonSplitRoutesDeps["store"];
    /** Strategies as memories; without it the strategy routes answer 503. */
    strategies?: StrategyStore;
  };
  completeLoop: LoopRoutesDeps["completeLoop"];
  /** The guardrails' thresholds, shown by the loop endpoints; absent: the defaults. */
  guardrails?: LoopRoutesDeps["guardrails"];
  commonIssues: LessonRoutesDeps["commonIssues"];
  /** `POST /api/v1/lessons/for-task`; absent: the route answers 503. */
  lessonsForTask?: LessonRoutesDeps["forTask"];
  /** Requests one API key may make to it a minute (`LESSONS_FOR_TASK_REQUESTS_PER_MINUTE`, 600 by default). */
  lessonsForTaskPerMinute?: number;
  clock: FeedbackRoutesDeps["clock"];
  /** Where request failures are logged (once, here). */
  logger?: Pick<Logger, "warn" | "error"> & Partial<Pick<Logger, "info">>;
  /** AUDIT_HMAC_KEY: the key of the audit's actor fingerprints (a random one per process when absent). */
  auditKey?: string;
  /** Counts feedback in metrics, as the Kafka path does. */
  onFeedback?: FeedbackRoutesDeps["onFeedback"];
  /**
   * ALLOW_CLEARTEXT_CREDENTIALS: accept a key sent over plain HTTP from another host. Otherwise a
   * key is taken over HTTPS (the TLS-terminating proxy's `x-forwarded-proto: https`) or from the
   * same host only, and refused with 403 so that the misconfiguration shows at once.
   */
  allowCleartextKeys?: boolean;
  /** Unknown keys a client address may present per window before it gets 429 (default 20 a minute). */
  throttle?: AuthThrottle;
  /** OTLP over HTTP (`POST /v1/traces`), when the OTLP bridge runs (OTLP_TOPIC). */
  otlp?: OtlpHttpIngest;
  /** `POST /api/v1/reflect`: one run through the pipeline; absent: its routes answer 503. */
  reflect?: ReflectRouteDeps;
}

/** The lesson routes' stores and bounds. */
function lessonRoutesDeps(deps: ApiRoutesDeps): LessonRoutesDeps {
  return {
    store: deps.stores.lessons,
    commonIssues: deps.commonIssues,
    forTask: deps.lessonsForTask,
    forTaskPerMinute: deps.lessonsForTaskPerMinute ?? 600,
  };
}

/** The request came from this host (loopback), so its key never crossed a network. */
function fromLoopback(request: FastifyRequest): boolean {
  const ip = request.ip;
  return ip === "::1" || ip.startsWith("127.") || ip.startsWith("::ffff:127.");
}

/**
 * The request reached Reflector over TLS, or through a trusted proxy (TRUSTED_PROXIES) that says
 * it did: Fastify reads `X-Forwarded-Proto` into `request.protocol` only from those.
 */
function overTls(request: FastifyRequest): boolean {
  return request.protocol === "https";
}

/** The role each authenticated route needs; a route missing here is refused to every key. */
export const routeRoles: Readonly<Record<string, ApiRole>> = {
  ...loopRouteRoles,
  ...lessonRouteRoles,
  ...lessonSplitRouteRoles,
  ...lessonApprovalRouteRoles,
  ...feedbackRouteRoles,
  ...answerFeedbackRouteRoles,
  ...strategyRouteRoles,
  ...otlpRouteRoles,
  ...reflectRouteRoles,
};

class BadRequest extends Error {
  constructor(readonly issues: string[]) {
    super(issues.join("; "));
  }
}

/** Zod's issues as `body.alignment_score: Too big: …`: where, the field's path, the message. */
function badRequestOf(err: unknown): BadRequest | null {
  if (!hasZodFastifySchemaValidationErrors(err)) return null;
  const context = (err as { validationContext?: string }).validationContext ?? "request";
  const where = context === "querystring" ? "query" : context;
  return new BadRequest(
    err.validation.map((issue) => {
      const path = issue.instancePath.split("/").filter(Boolean).join(".");
      return `${where}${path ? "." + path : ""}: ${issue.message}`;
    }),
  );
}

function loopRoutesDeps(deps: ApiRoutesDeps): LoopRoutesDeps {
  return {
    store: deps.stores.loops,
    completeLoop: deps.completeLoop,
    guardrails: deps.guardrails ?? defaultGuardrailConfig,
  };
}

/** The operator's lesson routes whose every change is audited: a split and an approval. */
function registerAuditedLessonRoutes(scope: ApiScope, deps: ApiRoutesDeps, ctx: ApiContext): void {
  const auditLogger = deps.logger?.info ? { info: deps.logger.info.bind(deps.logger) } : undefined;
  const audit = {
    ...(deps.auditKey ? { auditKey: deps.auditKey } : {}),
    ...(auditLogger ? { logger: auditLogger } : {}),
  };
  registerLessonSplitRoute(scope, { store: deps.stores.lessonSplits, ...audit }, ctx);
  registerLessonApprovalRoute(scope, { store: deps.stores.lessons, clock: deps.clock, ...audit }, ctx);
}

/**
 * The authenticated API: the orchestrator endpoints of the loops feature and the query and feedback API
 * (lessons, feedback). The caller's tenant comes only from its bearer key, never from the request,
 * and every store call is scoped to it.
 */
export function registerApiRoutes(app: FastifyInstance, deps: ApiRoutesDeps): void {
  const grants = new WeakMap<FastifyRequest, ApiGrant>();
  const throttle = deps.throttle ?? createAuthThrottle({ maxFailures: 20, windowMs: 60_000 });
  const ctx: ApiContext = {
    tenantOf: (request) => {
      const grant = grants.get(request);
      if (grant === undefined) throw new Error("route registered without authentication");
      return grant.tenant;
    },
    requireRole: (request, role) => {
      if (!grants.get(request)?.roles.has(role)) throw new Forbidden(role);
    },
    hasRole: (request, role) => grants.get(request)?.roles.has(role) ?? false,
    keyOf: credentialOf,
    rateLimit: (perMinute) => createRateLimit({ perMinute }),
  };

  app.register((plain, _opts, done) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    scope.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
      // Same-host callers (tools, sidecars) are not throttled: guessing from this host needs the host.
      const local = fromLoopback(request);
      const retryAfter = local ? null : throttle.retryAfter(request.ip);
      if (retryAfter !== null) {
        await reply.code(429).header("retry-after", String(retryAfter)).send({
          error: "too_many_requests",
          message: "too many unknown API keys from this address; retry later",
        });
        return reply;
      }
      const header = request.headers.authorization ?? "";
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      if (match && !deps.allowCleartextKeys && !overTls(request) && !local) {
        await reply.code(403).send({
          error: "forbidden",
          message:
            "API keys are accepted over HTTPS only (a TLS-terminating proxy sets x-forwarded-proto: https); ALLOW_CLEARTEXT_CREDENTIALS=true accepts them over plain HTTP",
        });
        return reply;
      }
      const grant = match?.[1] ? deps.keys.grantFor(match[1]) : null;
      if (grant === null) {
        // Only a wrong key is a guess; a request without one (a probe, a misconfigured client)
        // guesses nothing, and counting it would lock out everyone behind the same proxy.
        if (!local && match) throttle.failed(request.ip);
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
    // A POST without a body is judged as an empty object: the answer names the missing fields.
    scope.addHook("preValidation", (request, _reply, next) => {
      if (request.method === "POST") request.body ??= {};
      next();
    });

    scope.setErrorHandler(async (err: unknown, _request, reply) => {
      if (err instanceof Forbidden) {
        return reply.code(403).send({ error: "forbidden", message: err.message });
      }
      const invalid = err instanceof BadRequest ? err : badRequestOf(err);
      if (invalid) {
        return reply
          .code(400)
          .send({ error: "bad_request", message: invalid.message, issues: invalid.issues });
      }
      const status = (err as { statusCode?: unknown }).statusCode;
      if (typeof status === "number" && status >= 400 && status < 500) {
        const error = problemTypes[status]?.error ?? "bad_request";
        return reply.code(status).send({ error, message: (err as Error).message, issues: [] });
      }
      // Data Postgres refuses (a NUL byte, a value out of range) is the request's fault; what
      // Postgres said (table, constraint, values) is logged, never answered.
      if (classifyFailure(err) === "dead-letter") {
        deps.logger?.warn({ err }, "api request refused: its data cannot be stored");
        return reply.code(400).send({
          error: "bad_request",
          message: "the request's data cannot be stored (a value out of range, or text that cannot be kept)",
          issues: [],
        });
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

    registerLoopRoutes(scope, loopRoutesDeps(deps), ctx);
    registerLessonRoutes(scope, lessonRoutesDeps(deps), ctx);
    registerAuditedLessonRoutes(scope, deps, ctx);
    registerFeedbackRoutes(
      scope,
      {
        store: deps.stores.feedback,
        clock: deps.clock,
        ...(deps.onFeedback ? { onFeedback: deps.onFeedback } : {}),
      },
      ctx,
    );
    registerReflectRoutes(scope, deps.reflect, ctx);
    registerAnswerFeedbackRoute(scope, { store: deps.stores.feedback, clock: deps.clock }, ctx);
    registerStrategyRoutes(scope, { store: deps.stores.strategies }, ctx);
    registerOtlpRoute(
      scope,
      {
        ingest: deps.otlp ?? null,
        now: () => deps.clock.now().getTime(),
        ...(deps.logger ? { logger: deps.logger } : {}),
      },
      ctx,
    );
    done();
  });
}
