import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler } from "fastify-type-provider-zod";
import type { Registry } from "prom-client";
import { z } from "zod";
import { AttributionJson } from "../features/lessons/lesson-schemas.js";
import type { Logger } from "../observability/logger.js";
import { registerApiRoutes, type ApiRoutesDeps } from "./api-routes.js";
import {
  apiDescription,
  apiTags,
  registerApiReference,
  withDeprecatedParameters,
  withoutUnusedSchemas,
} from "./openapi-docs.js";
import { operationalAnswers } from "./operational-answers.js";
import { registerProblemPages } from "./problem-pages.js";
import { answerProblems } from "./problem-details.js";
import { checkResponses } from "./response-check.js";
import { observeRequests } from "./request-observer.js";

export interface HealthCheck {
  name: string;
  check(): Promise<boolean>;
}

export interface HttpServerDeps {
  registry: Registry;
  /** Consumer-group membership: not ready until the processor has joined. */
  isConsuming(): boolean;
  dependencies: HealthCheck[];
  /** Set while shutting down so load balancers and probes stop routing here first. */
  isStopping(): boolean;
  /** The authenticated orchestrator and query API; absent = operational endpoints only. */
  api?: ApiRoutesDeps;
  /** How long one round of dependency checks answers every probe (default 1,000 ms). */
  checkCacheMs?: number;
  /** A request not complete within this is answered 408 (default 30 s; never unbounded). */
  requestTimeoutMs?: number;
  /**
   * The proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (TRUSTED_PROXIES);
   * from anyone else those headers are ignored. Empty or absent: none.
   */
  trustedProxies?: readonly string[];
  /** Where each answered request is logged (method, route, status, duration; never keys or bodies). */
  logger?: Logger;
  /**
   * HTTP_VALIDATE_RESPONSES: every answer is checked against the schema its route documents for
   * its status (`response-check.ts`); a mismatch is answered 500. On in the tests.
   */
  validateResponses?: boolean;
}

/**
 * Path parameters longer than this are refused (414) by the router. Ids in paths are bounded by
 * their schemas (200 characters; a signature is 16): well over that, so every id a body may carry
 * is also accepted in a path, and one answer (400, from the schema) names what is too long.
 */
export const maxParamLength = 1_024;

/**
 * The dependency checks of `/readyz`, run at most once per `cacheMs` however many probes arrive:
 * concurrent probes share the round in flight, later ones its result. A flood of unauthenticated
 * probes then costs the dependencies nothing more than one probe a second.
 */
export function cachedChecks(dependencies: HealthCheck[], cacheMs: number, now: () => number = Date.now) {
  let last: { at: number; result: Promise<Record<string, boolean>> } | null = null;
  return (): Promise<Record<string, boolean>> => {
    if (last && now() - last.at < cacheMs) return last.result;
    const result = (async () => {
      const checks: Record<string, boolean> = {};
      await Promise.all(
        dependencies.map(async (dep) => {
          checks[dep.name] = await dep.check().catch(() => false);
        }),
      );
      return checks;
    })();
    last = { at: now(), result };
    return result;
  };
}

// A plain JSON Schema object (zod's type admits `false` as a sub-schema, OpenAPI's does not).
const attributionSchema = z.toJSONSchema(AttributionJson, { io: "output", unrepresentable: "any" }) as Record<
  string,
  unknown
>;

/**
 * Operational endpoints (liveness, readiness, Prometheus metrics) and, when configured, the
 * authenticated API. The OpenAPI document at `/openapi.json` is generated from the routes' zod
 * schemas, the same schemas that validate the requests.
 */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    routerOptions: { maxParamLength },
    // Fastify's default is 0 (no limit): a client dribbling its request would hold a socket forever.
    requestTimeout: deps.requestTimeoutMs ?? 30_000,
    // request.ip and request.protocol come from the forwarded headers only when a trusted proxy
    // sent them: a client cannot claim TLS or another address by writing a header.
    trustProxy: deps.trustedProxies && deps.trustedProxies.length > 0 ? [...deps.trustedProxies] : false,
  });
  observeRequests(app, deps.registry, deps.logger);
  answerProblems(app);
  if (deps.validateResponses) checkResponses(app);
  app.setValidatorCompiler(validatorCompiler);
  // The response schemas document the answers; they neither trim nor refuse them at run time (the
  // tests' response check holds the answers to them).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Registered first: it documents every route added after it.
  void app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Reflector API", version: "1", description: apiDescription },
      tags: apiTags,
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
        schemas: {
          Attribution: { ...attributionSchema, type: ["object", "null"] },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (document) =>
      withDeprecatedParameters(withoutUnusedSchemas(jsonSchemaTransformObject(document), ["Attribution"])),
  });

  app.after(() => {
    app.get("/openapi.json", { schema: operationalAnswers.openapi }, () => app.swagger());
    registerApiReference(app, () => app.swagger() as unknown as Record<string, unknown>);
    registerProblemPages(app);
    app.get("/healthz", { schema: operationalAnswers.healthz }, () => ({ status: "ok" }));
    const dependencyChecks = cachedChecks(deps.dependencies, deps.checkCacheMs ?? 1_000);
    app.get("/readyz", { schema: operationalAnswers.readyz }, async (_request, reply) => {
      const checks: Record<string, boolean> = {
        consumer: deps.isConsuming(),
        stopping: !deps.isStopping(),
        ...(await dependencyChecks()),
      };
      const ready = Object.values(checks).every(Boolean);
      return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not_ready", checks });
    });

    app.get("/metrics", { schema: operationalAnswers.metrics }, async (_request, reply) => {
      const body = await deps.registry.metrics();
      return reply.header("content-type", deps.registry.contentType).send(body);
    });

    if (deps.api) registerApiRoutes(app, deps.api);
  });

  // JSON like every other answer, so clients parse one error shape.
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: "not_found", message: `no route ${request.method} ${request.url.split("?")[0] ?? ""}` }),
  );

  return app;
}
