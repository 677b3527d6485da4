import { locateFailure } from "../../src/domain/attribution/attribute-failure.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryCodec } from "../../src/adapters/schema-registry/value-codec.js";
import { ReflectionOutcomeV1, TaskCompletedV1 } from "../../src/domain/contracts/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { multiAgentTrace } from "../support/multi-agent-trace.js";
import { taskEvent } from "../support/task-events.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ registry: true });
});

afterAll(async () => {
  await h.close();
});

describe("with a schema registry (Apicurio, Confluent-compatible API)", () => {
  it("reads Confluent wire-format and plain JSON inputs, and writes wire-format outputs", async () => {
    const tenantId = `tenant-${h.id}`;
    const wire = taskEvent({ tenantId });
    const plain = taskEvent({
      tenantId,
      error: { category: "auth_error", message: "401 invalid_grant: expired access token" },
    });
    await h.publish(wire); // the harness codec registers the schema and writes magic byte + id + JSON
    await h.publish(JSON.stringify(plain));

    for (const event of [wire, plain]) {
      const outputs = await h.waitForOutputs(event.eventId, 2);
      for (const output of outputs) {
        expect(output.raw?.[0], "magic byte").toBe(0);
        expect(output.raw?.readUInt32BE(1), "schema id").toBeGreaterThan(0);
        expect(output.headers["content-type"]).toBe("application/vnd.schemaregistry.v1+json");
      }
      const outcome = ReflectionOutcomeV1.parse(outputs.find((o) => o.value?.outcomeId)?.value);
      expect(outcome.tenantId).toBe(tenantId);
    }
  });

  it("carries a 340 KB trace with an 80k-character step in the wire format (the schema documents, not refuses, long steps)", async () => {
    const event = multiAgentTrace({ overrides: { tenantId: `tenant-${h.id}` } });
    await h.publish(event); // the registry client validates the value against the registered JSON Schema
    const outputs = await h.waitForOutputs(event.eventId, 2);
    const outcome = ReflectionOutcomeV1.parse(outputs.find((o) => o.value?.outcomeId)?.value);
    // The general rules' attribution, carried through the wire format unchanged.
    expect(outcome.reflection.attribution).toEqual(locateFailure(TaskCompletedV1.parse(event)).attribution);
  });

  it("serves health, readiness and metrics over HTTP", async () => {
    const health = await h.app.http.inject({ method: "GET", url: "/healthz" });
    expect(health.statusCode).toBe(200);
    const ready = await h.app.http.inject({ method: "GET", url: "/readyz" });
    expect(ready.json()).toEqual({
      status: "ready",
      checks: {
        consumer: true,
        stopping: true,
        kafka: true,
        postgres: true,
        redis: true,
        "schema-registry": true,
      },
    });
    const metrics = await h.app.http.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toMatch(/reflector_events_total\{result="processed"\} [1-9]/);
    expect(metrics.body).toMatch(/reflector_stage_duration_seconds_bucket\{le="[^"]+",stage="persist"\}/);
  });

  it("reports a registry that does not answer as not ready", async () => {
    const gone = createRegistryCodec({ url: "http://127.0.0.1:9/apis/ccompat/v7" });
    await expect(gone.check?.()).rejects.toThrow();
    const up = createRegistryCodec({ url: h.config.schemaRegistryUrl ?? "" });
    expect(await up.check?.()).toBe(true);
  });
});
