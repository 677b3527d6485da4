import type { FastifyInstance } from "fastify";
import { Histogram, type Registry } from "prom-client";
import type { Logger } from "../observability/logger.js";

const metricName = "reflector_http_request_duration_seconds";

/** Paths probes and scrapers call every few seconds: their lines are debug, not info. */
const quiet = new Set(["/healthz", "/readyz", "/metrics"]);

/** The request-duration histogram on `registry` (the one already there, when a server made it). */
export function createHttpMetrics(registry: Registry): Histogram<"method" | "route" | "status"> {
  return (
    (registry.getSingleMetric(metricName) as Histogram<"method" | "route" | "status"> | undefined) ??
    new Histogram({
      name: metricName,
      help: "HTTP requests answered, by method, route (its template, or unmatched) and status, and how long each took.",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    })
  );
}

/**
 * Every answered request, as a histogram by method, route and status, and as one access-log line
 * (method, route, status, milliseconds). The route is the template (`/api/v1/reflections/:id`),
 * never the path a client sent: ids stay out of the labels and the log, and so do the query, the
 * headers (API keys) and the bodies. A request no route matched is `unmatched`.
 */
export function observeRequests(app: FastifyInstance, registry: Registry, logger?: Logger): void {
  const duration = createHttpMetrics(registry);
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    duration.observe({ method: request.method, route, status: String(status) }, ms / 1000);
    if (logger) {
      const line = { method: request.method, route, status, ms: Math.round(ms * 10) / 10 };
      if (quiet.has(route) && status < 400) logger.debug(line, "http request");
      else if (status >= 500) logger.warn(line, "http request");
      else logger.info(line, "http request");
    }
    done();
  });
}
