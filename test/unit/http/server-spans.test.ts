import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "../../../src/http/http-server.js";

/**
 * One server span per HTTP request, exported to memory: named by the route's template, in the
 * caller's trace, active while the handler runs, and never with the path's ids, the query, a key
 * or a body. Probes and scrapes make none.
 */
const exporter = new InMemorySpanExporter();
const app = createHttpServer({
  registry: new Registry(),
  isConsuming: () => true,
  isStopping: () => false,
  dependencies: [],
});
const handlerSpans: (string | undefined)[] = [];
app.get("/things/:id", () => {
  handlerSpans.push(trace.getActiveSpan()?.spanContext().spanId);
  return { ok: true };
});
app.get("/broken", () => {
  throw new Error("kaput");
});

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  await app.ready();
});
afterEach(() => {
  exporter.reset();
});
afterAll(async () => {
  await app.close();
  trace.disable();
  context.disable();
  propagation.disable();
});

const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
const callerSpanId = "10f067aa0ba902b7";

describe("a server span per request", () => {
  it("is named by the route template, joins the caller's trace, is active in the handler and holds no id, query, key or body", async () => {
    const res = await app.inject({
      method: "GET",
      url: "/things/order-4417?token=query-secret",
      headers: {
        authorization: "Bearer key-that-must-not-show",
        traceparent: `00-${traceId}-${callerSpanId}-01`,
      },
    });
    expect(res.statusCode).toBe(200);
    const [span, ...more] = exporter.getFinishedSpans();
    expect(more).toEqual([]);
    if (!span) throw new Error("no server span");
    expect(span.name).toBe("GET /things/:id");
    expect(span.kind).toBe(1); // SpanKind.SERVER
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe(callerSpanId);
    expect(handlerSpans).toEqual([span.spanContext().spanId]);
    expect(span.attributes).toEqual({
      "http.request.method": "GET",
      "http.route": "/things/:id",
      "url.scheme": "http",
      "http.response.status_code": 200,
    });
    expect(span.status.code).toBe(0);
    expect(JSON.stringify([span.attributes, span.events, span.name])).not.toMatch(
      /order-4417|query-secret|key-that-must-not-show/,
    );
  });

  it("marks a 5xx as an error, names an unmatched request by its method only, and traces no probe or scrape", async () => {
    await app.inject({ method: "GET", url: "/broken" });
    await app.inject({
      method: "POST",
      url: "/no/such/thing-99",
      payload: { secret: "body-that-must-not-show" },
    });
    for (const url of ["/healthz", "/readyz", "/metrics"]) await app.inject({ method: "GET", url });
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(["GET /broken", "POST"]);
    const [broken, unmatched] = spans;
    expect(broken?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(broken?.attributes).toMatchObject({ "http.response.status_code": 500, "error.type": "500" });
    expect(unmatched?.attributes).toEqual({
      "http.request.method": "POST",
      "url.scheme": "http",
      "http.response.status_code": 404,
    });
    expect(unmatched?.status.code).toBe(0);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toMatch(/thing-99|body-that-must-not-show/);
  });
});
