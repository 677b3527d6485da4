import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHeuristicGenerator } from "../../src/adapters/llm/heuristic-generator.js";
import { locateFailure } from "../../src/domain/attribution/attribute-failure.js";
import { ReflectionOutcomeV1, LoopDecisionV1, TaskCompletedV1 } from "../../src/domain/contracts/index.js";
import type { ReflectionGenerator } from "../../src/pipeline/ports.js";
import { startHarness, type Harness } from "../support/harness.js";
import { multiAgentTrace } from "../support/multi-agent-trace.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

let h: Harness;
let tenantId: string;
let generatorCalls = 0;

const counting: ReflectionGenerator = (() => {
  const inner = createHeuristicGenerator();
  return {
    name: inner.name,
    generate: (request) => {
      generatorCalls += 1;
      return inner.generate(request);
    },
  };
})();

beforeAll(async () => {
  h = await startHarness({ overrides: { generator: counting } });
  tenantId = `tenant-${h.id}`;
});

afterAll(async () => {
  await h.close();
});

async function count(sql: string, ...params: unknown[]): Promise<number> {
  const res = await h.pool.query<{ n: string }>(sql, params);
  return Number(res.rows[0]?.n ?? 0);
}

describe("the pipeline on real Kafka, Postgres and Redis", () => {
  it("reflects on a failed task, stores the lesson, caches it and publishes outcome and decision", async () => {
    const event = taskEvent({ tenantId });
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await h.publish(event, { traceparent });
    const outputs = await h.waitForOutputs(event.eventId, 2);

    const outcomeMsg = outputs.find((o) => o.topic === h.config.topics.reflectionAccepted);
    const decisionMsg = outputs.find((o) => o.topic === h.config.topics.loopDecision);
    expect(outcomeMsg, "outcome on reflection.accepted").toBeDefined();
    expect(decisionMsg, "decision on loop.decision").toBeDefined();
    const outcome = ReflectionOutcomeV1.parse(outcomeMsg?.value);
    const decision = LoopDecisionV1.parse(decisionMsg?.value);

    expect(outcome).toMatchObject({
      tenantId,
      loopId: event.loopId,
      generator: "heuristic",
      deduplicated: false,
      occurrences: 1,
      stored: true,
    });
    expect(outcome.signature).toMatch(/^[0-9a-f]{16}$/);
    // The lesson uses the trace's own numbers: twice the 30000 ms limit the call ran with.
    expect(outcome.reflection.adjustments.join(" ")).toMatch(/set timeout_ms = 60000 for postgres_query/);
    // A timeout without alignment/drift scores asks for a rerun of the loop.
    expect(decision).toMatchObject({
      loopId: event.loopId,
      decision: "rerun",
      newLoopId: `${event.loopId}_r1`,
      rerunCount: 1,
    });

    for (const msg of [outcomeMsg, decisionMsg]) {
      expect(msg?.key).toBe(event.loopId);
      expect(msg?.headers).toMatchObject({
        ce_specversion: "1.0",
        ce_source: `/reflector/${h.config.kafka.groupId}`,
        traceparent,
        "content-type": "application/json",
      });
      expect(msg?.headers.ce_id).toBe(msg?.value?.outcomeId ?? msg?.value?.decisionId);
    }

    const row = await h.pool.query<{ id: string; occurrences: number; generator: string; verdict: string }>(
      "SELECT id, occurrences, generator, verdict FROM reflections WHERE tenant_id = $1 AND signature = $2",
      [tenantId, outcome.signature],
    );
    expect(row.rows).toEqual([
      { id: outcome.reflectionId, occurrences: 1, generator: "heuristic", verdict: outcome.verdict },
    ]);
    expect(
      await count("SELECT count(*) AS n FROM strategies WHERE reflection_id = $1", outcome.reflectionId),
    ).toBe(1);
    expect(
      await count(
        "SELECT count(*) AS n FROM loop_traces WHERE tenant_id = $1 AND loop_id = $2 AND decision = 'rerun'",
        tenantId,
        event.loopId,
      ),
    ).toBe(1);
    expect(
      await count(
        "SELECT count(*) AS n FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
        tenantId,
        event.eventId,
      ),
    ).toBe(1);

    const prefix = h.config.redis.keyPrefix;
    expect(await h.redis.exists(`${prefix}:evt:${tenantId}:${event.eventId}`)).toBe(1);
    const cached = JSON.parse(
      (await h.redis.get(`${prefix}:sig:${tenantId}:${outcome.signature}`)) ?? "null",
    ) as { id?: string } | null;
    expect(cached?.id).toBe(outcome.reflectionId);
  });

  it("processes a 130-step, 340 KB multi-agent trace with an 80k-character step and attributes it to the agent", async () => {
    const event = multiAgentTrace({ overrides: { tenantId, projectId: "big-trace" } });
    expect(Buffer.byteLength(JSON.stringify(event))).toBeGreaterThan(330_000);
    await h.publish(event);
    const outputs = await h.waitForOutputs(event.eventId, 2);
    const outcomeMsg = outputs.find(
      (o) => o.topic === h.config.topics.reflectionAccepted || o.topic === h.config.topics.reflectionRejected,
    );
    const outcome = ReflectionOutcomeV1.parse(outcomeMsg?.value);
    // The general rules' attribution, carried through the pipeline unchanged; the agent's guess at
    // step 61 is no evidence, so no cause is claimed.
    expect(outcome.reflection.attribution).toEqual(locateFailure(TaskCompletedV1.parse(event)).attribution);
    expect(outcome.reflection.reflectionText).toMatch(/no cause is claimed/);
    expect(h.on(h.config.topics.deadLetter, (d) => d.key === event.loopId)).toEqual([]);
    // Stored with the same attribution, or not stored at all.
    const row = await h.pool.query<{ attribution: unknown }>(
      "SELECT attribution FROM reflections WHERE id = $1",
      [outcome.reflectionId],
    );
    expect(row.rows.map((r) => r.attribution)).toEqual(
      outcome.stored ? [outcome.reflection.attribution] : [],
    );
  });

  it("reuses a known signature without calling the generator and counts the occurrence", async () => {
    const first = taskEvent({
      tenantId,
      projectId: "dedupe",
      error: {
        category: "timeout_error",
        type: "lock_timeout",
        message: "Lock wait on table orders exceeded 15s",
      },
    });
    await h.publish(first);
    const [firstOutcome] = (await h.waitForOutputs(first.eventId, 2)).filter((o) => o.value?.outcomeId);
    const callsBefore = generatorCalls;

    // Same failure, other ids and numbers: the masked signature is the same.
    const second = taskEvent({
      tenantId,
      projectId: "dedupe",
      error: {
        category: "timeout_error",
        type: "lock_timeout",
        message: "Lock wait on table orders exceeded 22s",
      },
    });
    await h.publish(second);
    const secondOutcome = (await h.waitForOutputs(second.eventId, 2)).find((o) => o.value?.outcomeId);
    expect(secondOutcome?.value).toMatchObject({
      signature: firstOutcome?.value?.signature,
      reflectionId: firstOutcome?.value?.reflectionId,
      deduplicated: true,
      // One more than the first saw (which may itself have joined an earlier test's lesson).
      occurrences: Number(firstOutcome?.value?.occurrences) + 1,
      generator: "reused",
      attempts: 0,
      memory: { action: "reuse" },
    });
    expect(generatorCalls).toBe(callsBefore);
    expect(
      await count(
        "SELECT occurrences AS n FROM reflections WHERE id = $1",
        firstOutcome?.value?.reflectionId,
      ),
    ).toBe(Number(firstOutcome?.value?.occurrences) + 1);
  });

  it("dead-letters malformed inputs with their reasons while valid events keep flowing", async () => {
    const before = taskEvent({ tenantId });
    const after = taskEvent({ tenantId });
    await h.publish(before);
    const notJson = await h.publish("{not json");
    const invalid = await h.publish(
      JSON.stringify({ ...taskEvent({ tenantId }), outcome: "exploded", tenantId: undefined }),
    );
    const future = await h.publish(JSON.stringify({ ...taskEvent({ tenantId }), schemaVersion: 2 }));
    await h.publish(after);

    await h.waitForOutputs(after.eventId, 2);
    await h.waitForOutputs(before.eventId, 2);
    const dlq = await waitFor(() => {
      const found = h.on(h.config.topics.deadLetter);
      return found.length >= 3 ? found : undefined;
    });
    const byOffset = (partition: number, offset: string | undefined) =>
      dlq.find(
        (d) =>
          d.headers["reflector.original.partition"] === String(partition) &&
          d.headers["reflector.original.offset"] === offset,
      );

    const cases = [
      { meta: notJson, code: "DECODE_FAILED", reason: /not JSON/ },
      {
        meta: invalid,
        code: "SCHEMA_INVALID",
        reason: /tenantId: .*outcome: Invalid option|outcome: .*tenantId/,
      },
      { meta: future, code: "UNSUPPORTED_SCHEMA_VERSION", reason: /schemaVersion 2/ },
    ];
    for (const c of cases) {
      const letter = byOffset(c.meta.partition, c.meta.offset);
      expect(letter, `dead letter for ${c.code}`).toBeDefined();
      expect(letter?.headers["reflector.error.code"]).toBe(c.code);
      expect(letter?.headers["reflector.error.message"]).toMatch(c.reason);
      expect(letter?.headers["reflector.original.topic"]).toBe(h.config.topics.taskCompleted);
      expect(letter?.headers["reflector.consumer.group"]).toBe(h.config.kafka.groupId);
    }
    // The undecodable record is dead-lettered as it was read.
    expect(byOffset(notJson.partition, notJson.offset)?.raw?.toString()).toBe("{not json");
  });

  it("a second record of a committed event (a retry, a replay) publishes nothing and writes nothing", async () => {
    const event = taskEvent({
      tenantId,
      projectId: "replay",
      task: { description: "Export invoices to the billing warehouse" },
      error: { category: "timeout_error", type: "export_timeout", message: "Export job exceeded 120s limit" },
    });
    const duplicates = async () =>
      (await h.app.metrics.events.get()).values.find((v) => v.labels.result === "duplicate")?.value ?? 0;
    await h.publish(event);
    const first = await h.waitForOutputs(event.eventId, 2);
    const rowsBefore = await count("SELECT count(*) AS n FROM reflections WHERE tenant_id = $1", tenantId);
    const firstOutcome = first.find((o) => o.value?.outcomeId)?.value;
    // The lesson may be shared: a near-duplicate lesson of another test's task is merged into it.
    expect(firstOutcome?.reflectionId).toEqual(expect.any(String));
    const reflectionId = String(firstOutcome?.reflectionId);
    const occurrencesBefore = await count(
      "SELECT occurrences AS n FROM reflections WHERE id = $1",
      reflectionId,
    );
    const duplicatesBefore = await duplicates();

    await h.publish(event);
    await h.publish(event);
    // Both records are consumed and committed as duplicates…
    await waitFor(async () => (await duplicates()) === duplicatesBefore + 2, {
      timeoutMs: 60_000,
      what: "two duplicate records consumed",
    });
    // …and counted no occurrence (the later event below may recur the same lesson, and count one)…
    expect(await count("SELECT occurrences AS n FROM reflections WHERE id = $1", reflectionId)).toBe(
      occurrencesBefore,
    );
    // …and a later event's outputs arrive while this event still has exactly its first two.
    const later = taskEvent({
      tenantId,
      projectId: "replay",
      loopId: event.loopId,
      eventId: `${event.eventId}-later`,
    });
    await h.publish(later);
    await h.waitForOutputs(later.eventId, 2);
    const all = await h.waitForOutputs(event.eventId, 2);
    expect(all.map((o) => o.headers.ce_id).sort()).toEqual(first.map((o) => o.headers.ce_id).sort());
    expect(await count("SELECT count(*) AS n FROM reflections WHERE tenant_id = $1", tenantId)).toBe(
      rowsBefore,
    );
    expect(
      await count(
        "SELECT count(*) AS n FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
        tenantId,
        event.eventId,
      ),
    ).toBe(1);
  });

  it("processes plain JSON produced by a third-party client (Kafka's console producer)", async () => {
    const event = taskEvent({ tenantId, projectId: "console-producer" });
    // Kafka's own Java producer, from the jars the test setup fetched: headers, key and value on
    // one line, separated by tabs.
    execFileSync(
      "java",
      [
        "-cp",
        `${inject("kafkaLibs")}/*`,
        "kafka.tools.ConsoleProducer",
        "--bootstrap-server",
        h.config.kafka.brokers.join(","),
        "--topic",
        h.config.topics.taskCompleted,
        "--property",
        "parse.key=true",
        "--property",
        "parse.headers=true",
      ],
      {
        input: `ce_id:from-console\t${event.loopId}\t${JSON.stringify(event)}\n`,
        stdio: ["pipe", "ignore", "pipe"],
      },
    );
    const outputs = await h.waitForOutputs(event.eventId, 2);
    expect(outputs.map((o) => o.topic).sort()).toEqual(
      [h.config.topics.loopDecision, h.config.topics.reflectionAccepted].sort(),
    );
  });
});
