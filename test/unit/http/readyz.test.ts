import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createHttpServer } from "../../../src/http/http-server.js";

function server(state: { consuming: boolean; stopping: boolean; deps: Record<string, boolean | Error> }) {
  return createHttpServer({
    registry: new Registry(),
    isConsuming: () => state.consuming,
    isStopping: () => state.stopping,
    dependencies: Object.entries(state.deps).map(([name, result]) => ({
      name,
      check: () => (result instanceof Error ? Promise.reject(result) : Promise.resolve(result)),
    })),
  });
}

describe("/readyz", () => {
  it("is 200 when the consumer is in its group and every dependency answers", async () => {
    const app = server({
      consuming: true,
      stopping: false,
      deps: { kafka: true, postgres: true, redis: true },
    });
    const reply = await app.inject({ method: "GET", url: "/readyz" });
    expect(reply.statusCode).toBe(200);
    expect(reply.json()).toEqual({
      status: "ready",
      checks: { consumer: true, stopping: true, kafka: true, postgres: true, redis: true },
    });
  });

  it("is 503 and names the failing check: a dependency down or throwing, no group membership, or stopping", async () => {
    const cases = [
      { consuming: true, stopping: false, deps: { kafka: false, postgres: true }, failing: "kafka" },
      {
        consuming: true,
        stopping: false,
        deps: { kafka: true, postgres: new Error("ECONNREFUSED") },
        failing: "postgres",
      },
      { consuming: false, stopping: false, deps: { kafka: true, postgres: true }, failing: "consumer" },
      { consuming: true, stopping: true, deps: { kafka: true, postgres: true }, failing: "stopping" },
    ];
    for (const { failing, ...state } of cases) {
      const reply = await server(state).inject({ method: "GET", url: "/readyz" });
      expect(reply.statusCode, failing).toBe(503);
      const body = reply.json<{ status: string; checks: Record<string, boolean> }>();
      expect(body.status).toBe("not_ready");
      expect(
        Object.entries(body.checks)
          .filter(([, ok]) => !ok)
          .map(([name]) => name),
      ).toEqual([failing]);
    }
  });
});
