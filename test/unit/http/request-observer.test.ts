import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { createHttpServer } from "../../../src/http/http-server.js";
import { createLogger } from "../../../src/observability/logger.js";

/** Access logs and the request-duration histogram: routes by template, never ids, keys or bodies. */
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    for (const line of chunk.toString().split("\n").filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
    callback();
  },
});
const registry = new Registry();
const app = createHttpServer({
  registry,
  isConsuming: () => true,
  isStopping: () => false,
  dependencies: [],
  logger: createLogger("info", sink),
});
app.get("/things/:id", () => ({ ok: true }));
afterAll(async () => {
  await app.close();
});

describe("every answered request", () => {
  it("is counted by method, route template and status, and logged without its path, key or body", async () => {
    await app.inject({
      method: "GET",
      url: "/things/order-4417?token=query-secret",
      headers: { authorization: "Bearer key-that-must-not-show" },
    });
    await app.inject({ method: "POST", url: "/no/such/route", payload: { body: "body-that-must-not-show" } });
    await app.inject({ method: "GET", url: "/healthz" });
    await new Promise((resolve) => setImmediate(resolve));

    const histogram = await registry.getSingleMetric("reflector_http_request_duration_seconds")?.get();
    const counts = (histogram?.values ?? [])
      .filter(
        (v) => (v as { metricName?: string }).metricName === "reflector_http_request_duration_seconds_count",
      )
      .map(
        (v) =>
          `${String(v.labels.method)} ${String(v.labels.route)} ${String(v.labels.status)} ${String(v.value)}`,
      )
      .sort();
    expect(counts).toEqual(["GET /healthz 200 1", "GET /things/:id 200 1", "POST unmatched 404 1"]);

    const access = lines.filter((l) => l.msg === "http request");
    // Probes are logged at debug: the info logger shows the other two.
    expect(access.map((l) => `${String(l.method)} ${String(l.route)} ${String(l.status)}`)).toEqual([
      "GET /things/:id 200",
      "POST unmatched 404",
    ]);
    expect(access.every((l) => typeof l.ms === "number")).toBe(true);
    const logged = JSON.stringify(lines);
    for (const secret of ["order-4417", "query-secret", "key-that-must-not-show", "body-that-must-not-show"])
      expect(logged).not.toContain(secret);
  });
});
