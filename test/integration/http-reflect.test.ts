import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { apiOf, failure } from "../support/api-requests.js";
import { startHarness, type Harness } from "../support/harness.js";
import { runMultiAgentTask, sdkTracer, serialize } from "../support/otel-traces.js";
import { problem } from "../support/problems.js";
import { waitFor } from "../support/wait-for.js";

/**
 * `POST /api/v1/reflect` against the real app on Kafka, Postgres and Redis: a run posted over HTTP
 * goes through the consumer's pipeline, once by event id whichever way it comes (HTTP twice, HTTP
 * then Kafka, Kafka then HTTP), with its outputs published on the same topics.
 */

const run = randomUUID().slice(0, 8);
const tenant = `reflect-${run}`;
const key = `reflect-key-${run}-0123456789`;
const readKey = `reflect-read-${run}-0123456789`;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { API_KEYS: `${key}:${tenant}:read+decide, ${readKey}:${tenant}:read` } });
});
afterAll(async () => {
  await h.close();
});

const api = apiOf(() => h, key);

const run1 = (suffix: string): TaskCompleted => ({
  ...failure(
    tenant,
    "QueryTimeout",
    `query on orders_${suffix} timed out after 30 s`,
    `Export orders ${suffix}`,
  ),
  eventId: `evt-${suffix}-${run}`,
  loopId: `loop-${suffix}-${run}`,
});

/** The committed rows and the published outputs of an event id. */
async function stored(eventId: string) {
  const rows = await h.pool.query<{ outputs: unknown[] }>(
    "SELECT outputs FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
    [tenant, eventId],
  );
  const published = h.on(h.config.topics.loopDecision, (c) => c.value?.sourceEventId === eventId).length;
  const outcomes = [h.config.topics.reflectionAccepted, h.config.topics.reflectionRejected]
    .map((topic) => h.on(topic, (c) => c.value?.sourceEventId === eventId).length)
    .reduce((a, b) => a + b, 0);
  return { rows: rows.rowCount ?? 0, decisions: published, outcomes };
}

/** What the processor's outcome counters hold now, summed over their labels. */
async function counted() {
  const sum = async (metric: { get(): Promise<{ values: { value: number }[] }> }) =>
    (await metric.get()).values.reduce((total, v) => total + v.value, 0);
  return { verdicts: await sum(h.app.metrics.verdicts), decisions: await sum(h.app.metrics.decisions) };
}

describe("POST /api/v1/reflect", () => {
  it("reflects a run through the pipeline and answers the reflection, the verdict and the decision", async () => {
    const event = run1("a");
    const before = await counted();
    const res = await api("POST", "/api/v1/reflect", { body: event });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      event_id: event.eventId,
      loop_id: event.loopId,
      status: "processed",
      stored: true,
      decision: { decision: "rerun", loop_id: event.loopId },
    });
    expect(["accepted", "accepted_with_warnings"]).toContain(res.body.verdict);
    const reflection = res.body.reflection as { reflection_text: string; strategy_text: string };
    expect(reflection.reflection_text.length).toBeGreaterThan(0);
    // The same outputs the Kafka path publishes, on the same topics, once.
    await h.waitForOutputs(event.eventId, 2);
    const decision = h.on(h.config.topics.loopDecision, (c) => c.value?.sourceEventId === event.eventId)[0];
    expect(decision?.value?.decisionId).toBe((res.body.decision as { decision_id: string }).decision_id);
    expect(await stored(event.eventId)).toEqual({ rows: 1, decisions: 1, outcomes: 1 });
    // Counted as a consumed event's outputs are: one verdict, one decision.
    const after = await counted();
    expect({
      verdicts: after.verdicts - before.verdicts,
      decisions: after.decisions - before.decisions,
    }).toEqual({
      verdicts: 1,
      decisions: 1,
    });
  });

  it("answers the first outcome to a replay, and the same run on Kafka afterwards changes and publishes nothing", async () => {
    const event = run1("b");
    const first = await api("POST", "/api/v1/reflect", { body: event });
    expect(first.status).toBe(200);
    await h.waitForOutputs(event.eventId, 2);
    const again = await api("POST", "/api/v1/reflect", { body: event });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, status: "replayed" });
    // A replay publishes the stored outputs again (same CloudEvents ids), as loop-complete does.
    await waitFor(async () => ((await stored(event.eventId)).decisions === 2 ? true : undefined), {
      what: "the replay's outputs",
    });
    const ids = h
      .on(h.config.topics.loopDecision, (c) => c.value?.sourceEventId === event.eventId)
      .map((c) => c.headers.ce_id);
    expect(new Set(ids).size).toBe(1);
    // The same event on Kafka: another record of a committed event id publishes nothing.
    const marker = run1("b-marker");
    await h.publish(event);
    await h.publish(marker);
    await h.waitForOutputs(marker.eventId, 2);
    expect(await stored(event.eventId)).toEqual({ rows: 1, decisions: 2, outcomes: 2 });
    const fetched = await api("GET", `/api/v1/reflect/${event.eventId}`, { key: readKey });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ ...first.body, status: "replayed" });
  });

  it("answers a run Kafka reflected first with Kafka's outcome, publishing nothing more", async () => {
    const event = run1("c");
    await h.publish(event);
    const outputs = await h.waitForOutputs(event.eventId, 2);
    const res = await api("POST", "/api/v1/reflect", { body: event });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("replayed");
    const kafkaDecision = outputs.find((o) => o.topic === h.config.topics.loopDecision)?.value;
    const kafkaOutcome = outputs.find((o) => o.topic !== h.config.topics.loopDecision)?.value;
    expect((res.body.decision as { decision_id: string }).decision_id).toBe(kafkaDecision?.decisionId);
    expect(res.body.reflection_id).toBe(kafkaOutcome?.reflectionId);
    expect(res.body.verdict).toBe(kafkaOutcome?.verdict);
    expect(await stored(event.eventId)).toEqual({ rows: 1, decisions: 1, outcomes: 1 });
  });

  it("reflects an OTLP/JSON export of one run, under the bridge's event id", async () => {
    const sdk = sdkTracer({ "service.name": "churn-agents" });
    const trace = runMultiAgentTask(sdk.tracer);
    const body = JSON.parse(serialize(sdk.finished(), "json").toString("utf8")) as unknown;
    await sdk.shutdown();
    const res = await api("POST", "/api/v1/reflect", { body });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ event_id: `otlp-${trace.traceId}`, status: "processed" });
    expect(res.body.decision).not.toBeNull();
  });

  it("answers invalid runs, another tenant's run and a key without decide with problem details", async () => {
    const invalid = await api("POST", "/api/v1/reflect", { body: { ...run1("d"), outcome: "maybe" } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(invalid.body).toMatchObject({ type: "/problems/validation", status: 400, error: "bad_request" });
    expect(invalid.body.issues).toEqual([expect.stringMatching(/^body\.outcome: /)]);
    const other = await api("POST", "/api/v1/reflect", { body: { ...run1("e"), tenantId: "someone-else" } });
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ type: "/problems/forbidden", instance: "/api/v1/reflect" });
    const reader = await api("POST", "/api/v1/reflect", { key: readKey, body: run1("f") });
    expect(reader.body).toEqual(
      problem(403, "/api/v1/reflect", { error: "forbidden", message: "this API key may not decide" }),
    );
    const unknown = await api("GET", "/api/v1/reflect/never-posted");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: "/problems/not-found" });
    expect(await stored(run1("d").eventId)).toEqual({ rows: 0, decisions: 0, outcomes: 0 });
  });
});
