import { randomUUID } from "node:crypto";
import { Partitioners, type Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTopics } from "../../src/adapters/kafka/topics.js";
import { tenantOfTopic } from "../../src/domain/tenant-topic-binding.js";
import { createLogger } from "../../src/observability/logger.js";
import { replayDeadLetters } from "../../src/adapters/kafka/admin/dlq-replay.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The tenant trust model on the real Kafka: two tenants bound to their own topics (one by prefix,
 * one by exact name). An event whose tenantId matches its topic is decided; one that claims the
 * other tenant is dead-lettered as TENANT_TOPIC_MISMATCH; the unbound default input topic is not
 * read; a bound topic created after start makes the processor ask to be restarted.
 */
const run = randomUUID().slice(0, 8);
const acme = `acme-${run}`;
const globex = `globex-${run}`;
const acmeTopic = `${run}.agents.acme.tasks`;
const globexTopic = `${run}.agents.globex.tasks`;

let h: Harness;
let producer: Producer;
const crashes: Error[] = [];

async function send(
  topic: string,
  event: TaskCompleted,
  headers: Record<string, string> = {},
): Promise<void> {
  const value = await h.codec.encode(topic, "task-completed.v1", event);
  await producer.send({ topic, messages: [{ key: event.loopId, value, headers }] });
}

beforeAll(async () => {
  h = await startHarness({
    startApp: false,
    env: {
      TENANT_TOPIC_BINDING: `${acme}=${run}.agents.acme.*,${globex}=${globexTopic}`,
      TENANT_TOPIC_REFRESH_MS: "500",
    },
  });
  await ensureTopics(h.kafka, { names: [acmeTopic, globexTopic], partitions: 2, replicationFactor: 1 });
  const app = await h.startApp();
  app.onCrash((error) => crashes.push(error));
  producer = h.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
});

afterAll(async () => {
  await producer.disconnect();
  await h.close();
});

describe("TENANT_TOPIC_BINDING", () => {
  it("decides events on their tenant's topic and dead-letters one that claims another tenant", async () => {
    // On the default input topic, which the binding replaces: not read at all.
    const unbound = taskEvent({ tenantId: acme });
    await h.publish(unbound);
    const matching = taskEvent({ tenantId: acme });
    const spoofed = taskEvent({ tenantId: globex });
    const globexOwn = taskEvent({ tenantId: globex });
    await send(acmeTopic, matching);
    // It also names globex's topic as its origin, hoping a DLQ replay will deliver it there.
    await send(acmeTopic, spoofed, { "reflector.original.topic": globexTopic });
    await send(globexTopic, globexOwn);

    const [decision] = (await h.waitForOutputs(matching.eventId, 2)).filter(
      (c) => c.topic === h.config.topics.loopDecision,
    );
    expect(decision?.value).toMatchObject({ tenantId: acme, sourceEventId: matching.eventId });
    await h.waitForOutputs(globexOwn.eventId, 2);

    const dead = await waitFor(() => h.on(h.config.topics.deadLetter).find((c) => c.key === spoofed.loopId), {
      what: "the spoofed event's dead letter",
    });
    expect(dead.headers["reflector.error.code"]).toBe("TENANT_TOPIC_MISMATCH");
    expect(dead.headers["reflector.error.message"]).toBe(
      `tenantId "${globex}" arrived on topic ${acmeTopic}, which is bound to tenant "${acme}"`,
    );
    expect(dead.headers["reflector.original.topic"]).toBe(acmeTopic);
    // Nothing of the spoofed event was processed: no outputs, no loop trace, no lesson.
    expect(h.collected.some((c) => c.value?.sourceEventId === spoofed.eventId)).toBe(false);
    const rows = await h.pool.query("SELECT 1 FROM processed_events WHERE tenant_id = $1 AND event_id = $2", [
      globex,
      spoofed.eventId,
    ]);
    expect(rows.rowCount).toBe(0);
    // The default topic's event, published first, was never read.
    expect(h.collected.some((c) => c.value?.sourceEventId === unbound.eventId)).toBe(false);
    expect(await h.app.metrics.registry.metrics()).toMatch(
      /reflector_dead_letters_total\{code="TENANT_TOPIC_MISMATCH"\} 1/,
    );
  });

  it("dlq replay sends a tenant topic's dead letter back to that topic, and never across tenants", async () => {
    const binding = h.config.tenancy.binding ?? [];
    // An acme event dead-lettered from acme's topic (a bad shape), and a dead letter that names
    // globex's topic for an acme event (forged, or written before origins were checked).
    const bad = { ...taskEvent({ tenantId: acme }), outcome: "no-such-outcome" };
    await send(acmeTopic, bad as unknown as TaskCompleted);
    await waitFor(() => h.on(h.config.topics.deadLetter).find((c) => c.key === bad.loopId), {
      what: "the bad event's dead letter",
    });
    const forged = taskEvent({ tenantId: acme });
    await producer.send({
      topic: h.config.topics.deadLetter,
      messages: [
        {
          key: forged.loopId,
          value: await h.codec.encode(h.config.topics.deadLetter, "task-completed.v1", forged),
          headers: { "reflector.error.code": "SCHEMA_INVALID", "reflector.original.topic": globexTopic },
        },
      ],
    });
    const before = h.on(h.config.topics.deadLetter).length;
    const summary = await replayDeadLetters({
      kafka: h.kafka,
      deadLetterTopic: h.config.topics.deadLetter,
      targetTopic: h.config.topics.taskCompleted,
      sourceTopics: [h.config.topics.taskCompleted, h.config.topics.retry],
      tenancy: { binding, decode: (value) => h.codec.decode(value) },
      groupId: `${h.config.kafka.groupId}.dlq-replay`,
      dryRun: false,
      idleTimeoutMs: 5_000,
      logger: createLogger("silent"),
    });
    // The spoofed event (TENANT_TOPIC_MISMATCH) and the forged letter stay in the DLQ.
    expect(summary.byCode.TENANT_TOPIC_MISMATCH).toEqual({ replayed: 0, skipped: 1 });
    expect(summary.items.find((i) => i.key === forged.loopId)?.reason).toMatch(/^TENANT_TOPIC_MISMATCH: /);
    expect(summary.replayed).toBe(1);
    // Back on the acme topic (not the unread default topic): read again, dead-lettered again.
    const again = await waitFor(
      () =>
        h
          .on(h.config.topics.deadLetter)
          .slice(before)
          .find((c) => c.key === bad.loopId),
      { what: "the replayed letter's second refusal" },
    );
    expect(again.headers["reflector.original.topic"]).toBe(acmeTopic);
    expect(h.collected.some((c) => c.value?.sourceEventId === forged.eventId)).toBe(false);
    expect(tenantOfTopic(binding, acmeTopic)).toBe(acme);
  });

  it("asks to be restarted when a bound topic appears after start (KafkaJS would not read it)", async () => {
    const late = `${run}.agents.acme.late`;
    await ensureTopics(h.kafka, { names: [late], partitions: 1, replicationFactor: 1 });
    const error = await waitFor(() => crashes[0], { timeoutMs: 20_000, what: "the restart request" });
    expect(error.message).toBe(`new bound topics ${late}: restart to subscribe`);
  });
});
