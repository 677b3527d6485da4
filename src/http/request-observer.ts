import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Histogram, type Registry } from "prom-client";
import type { Logger } from "../observability/logger.js";
import { tracerName } from "../observability/tracing.js";

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

/** W3C trace context from the request's headers: an agent's call joins the agent's trace. */
const headerGetter: TextMapGetter<FastifyRequest["headers"]> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * One server span per request but the probes' and scrapes': named `METHOD /route/:template`, with
 * the method, the route template, the scheme and the status, never the path (it holds ids), the
 * query, a header or a body. It is the active span while the request is handled, so the store's
 * and the model's spans are its children. A no-op while tracing is off.
 */
function traceRequests(app: FastifyInstance): void {
  const tracer = trace.getTracer(tracerName);
  app.addHook("onRequest", (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined && quiet.has(route)) {
      done();
      return;
    }
    const parent = propagation.extract(context.active(), request.headers, headerGetter);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method,
          ...(route ? { "http.route": route } : {}),
          "url.scheme": request.protocol,
        },
      },
      parent,
    );
    spans.set(request, span);
    // The rest of the request (hooks, handler) runs with the span active.
    context.with(trace.setSpan(parent, span), done);
  });
  const end = (request: FastifyRequest, status: number | null) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    if (status === null) {
      span.setAttribute("error.type", "aborted");
      span.setStatus({ code: SpanStatusCode.ERROR, message: "the client went away" });
    } else {
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) {
        span.setAttribute("error.type", String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.end();
  };
  app.addHook("onResponse", (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook("onRequestAbort", (request, done) => {
    end(request, null);
    done();
  });
}

/**
 * Every answered request, as a histogram by method, route and status, and as one access-log line
 * (method, route, status, milliseconds). The route is the template (`/api/v1/reflections/:id`),
 * never the path a client sent: ids stay out of the labels and the log, and so do the query, the
 * headers (API keys) and the bodies. A request no route matched is `unmatched`. Each request but
 * the probes' is also a server span (`traceRequests`).
 */
export function observeRequests(app: FastifyInstance, registry: Registry, logger?: Logger): void {
  const duration = createHttpMetrics(registry);
  traceRequests(app);
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
