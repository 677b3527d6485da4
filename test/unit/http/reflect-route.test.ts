import { afterAll, describe, expect, it } from "vitest";
import type { TaskCompleted } from "../../../src/domain/contracts/index.js";
import type { ReflectRun, RunReflector } from "../../../src/pipeline/reflect-run.js";
import { apiTestServer } from "../../support/api-server.js";
import { taskEvent } from "../../support/task-events.js";

/**
 * `POST /api/v1/reflect`'s bounds, with a pipeline that takes as long as the test says: past
 * REFLECT_HTTP_TIMEOUT_MS the answer is 202 with where to fetch the outcome (the run goes on);
 * past REFLECT_HTTP_MAX_IN_FLIGHT runs, 503 with Retry-After; a body over its limit, 413.
 */

let running = 0;
let finish: ((run: ReflectRun) => void) | null = null;
const reflector: RunReflector = {
  reflect: (_event: TaskCompleted) => {
    running += 1;
    return new Promise<ReflectRun>((resolve) => {
      finish = (run) => {
        running -= 1;
        resolve(run);
      };
    });
  },
  get inFlight() {
    return running;
  },
};
const app = apiTestServer(
  "reflect-unit-key:tenant-u:read+decide",
  {
    reflect: {
      reflector,
      findProcessed: () => Promise.resolve(null),
      mapping: {
        tenantAttribute: "tenant.id",
        projectAttribute: "project.id",
        defaultTenant: "d",
        defaultProject: "d",
      },
      timeoutMs: 100,
      maxBodyBytes: 64 * 1024,
      maxInFlight: 1,
    },
  },
  { validateResponses: true },
);
afterAll(async () => {
  await app.close();
});

const post = (payload: unknown) =>
  app.inject({
    method: "POST",
    url: "/api/v1/reflect",
    headers: { authorization: "Bearer reflect-unit-key", "content-type": "application/json" },
    payload: JSON.stringify(payload),
  });

describe("POST /api/v1/reflect: bounds", () => {
  const event = taskEvent({ tenantId: "tenant-u", eventId: "evt-slow" });

  it("answers 202 with the event id and where to fetch the outcome once the deadline passed", async () => {
    const res = await post(event);
    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toBe("/api/v1/reflect/evt-slow");
    expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(res.json()).toEqual({
      event_id: "evt-slow",
      status: "pending",
      detail: "not reflected within 100 ms; the run goes on",
      outcome_url: "/api/v1/reflect/evt-slow",
    });
  });

  it("answers 503 with Retry-After while the process reflects its most runs, and 413 for a body over the limit", async () => {
    const busy = await post(taskEvent({ tenantId: "tenant-u" }));
    expect(busy.statusCode).toBe(503);
    expect(busy.headers["retry-after"]).toBe("1");
    expect(busy.json()).toMatchObject({ type: "/problems/unavailable", error: "unavailable" });
    finish?.({ status: "processed", event, outputs: [] });
    const large = await post({
      ...taskEvent({ tenantId: "tenant-u" }),
      task: { description: "x".repeat(70_000) },
    });
    expect(large.statusCode).toBe(413);
    expect(large.json()).toMatchObject({ type: "/problems/payload-too-large" });
  });

  it("answers an OTLP export holding two traces with a 400 naming why", async () => {
    const span = (traceId: string) => ({
      traceId,
      spanId: "0000000000000001",
      name: "invoke_agent a",
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
    });
    const res = await post({
      resourceSpans: [{ scopeSpans: [{ spans: [span("1".repeat(32)), span("2".repeat(32))] }] }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message: "one run is one trace: the export holds 2 trace ids" });
  });
});
