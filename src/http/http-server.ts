import Fastify, { type FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { registerApiRoutes, type ApiRoutesDeps } from "./api-routes.js";

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
}

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

/** Operational endpoints: liveness, readiness and Prometheus metrics. */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const app = Fastify({ logger: false });

  app.get("/healthz", () => ({ status: "ok" }));

  const dependencyChecks = cachedChecks(deps.dependencies, deps.checkCacheMs ?? 1_000);
  app.get("/readyz", async (_request, reply) => {
    const checks: Record<string, boolean> = {
      consumer: deps.isConsuming(),
      stopping: !deps.isStopping(),
      ...(await dependencyChecks()),
    };
    const ready = Object.values(checks).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not_ready", checks });
  });

  app.get("/metrics", async (_request, reply) => {
    const body = await deps.registry.metrics();
    return reply.header("content-type", deps.registry.contentType).send(body);
  });

  if (deps.api) registerApiRoutes(app, deps.api);

  // JSON like every other answer, so clients parse one error shape.
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: "not_found", message: `no route ${request.method} ${request.url.split("?")[0] ?? ""}` }),
  );

  return app;
}
