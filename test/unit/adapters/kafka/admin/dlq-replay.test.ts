import type { IHeaders, Kafka, KafkaMessage } from "kafkajs";
import { describe, expect, it } from "vitest";
import { parseTenantTopicBinding } from "../../../../../src/domain/tenant-topic-binding.js";
import { createLogger } from "../../../../../src/observability/logger.js";
import { replayDeadLetters } from "../../../../../src/adapters/kafka/admin/dlq-replay.js";
import { createJsonCodec } from "../../../../../src/adapters/schema-registry/value-codec.js";

/** A DLQ of one partition holding `letters`; what the replay sends is collected in `sent`. */
function fakeKafka(letters: { value: string | null; headers: IHeaders }[]) {
  const sent: { topic: string; value: string | null }[] = [];
  const messages = letters.map(
    (letter, i) =>
      ({
        key: Buffer.from(`loop-${String(i)}`),
        value: letter.value === null ? null : Buffer.from(letter.value),
        headers: letter.headers,
        offset: String(i),
        timestamp: "0",
        attributes: 0,
      }) satisfies KafkaMessage,
  );
  const kafka = {
    admin: () => ({
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      fetchTopicOffsets: () => Promise.resolve([{ partition: 0, high: String(messages.length), low: "0" }]),
      fetchOffsets: () => Promise.resolve([{ topic: "dlq", partitions: [{ partition: 0, offset: "-1" }] }]),
    }),
    producer: () => ({
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      sendBatch: ({
        topicMessages,
      }: {
        topicMessages: { topic: string; messages: { value: Buffer | null }[] }[];
      }) => {
        for (const { topic, messages: list } of topicMessages) {
          for (const m of list) sent.push({ topic, value: m.value?.toString() ?? null });
        }
        return Promise.resolve();
      },
    }),
    consumer: () => ({
      events: { END_BATCH_PROCESS: "end" },
      on: () => undefined,
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      subscribe: () => Promise.resolve(),
      commitOffsets: () => Promise.resolve(),
      run: ({ eachBatch }: { eachBatch: (payload: unknown) => Promise<void> }) => {
        setImmediate(() => {
          void eachBatch({
            batch: { topic: "dlq", partition: 0, messages, lastOffset: () => String(messages.length - 1) },
          });
        });
        return Promise.resolve();
      },
    }),
  };
  return { kafka: kafka as unknown as Kafka, sent };
}

const binding = parseTenantTopicBinding("acme=agents.acme,globex=agents.globex");
const event = (tenantId: string) => JSON.stringify({ schemaVersion: 1, tenantId, eventId: "e" });
const letter = (code: string, from: string, value: string | null) => ({
  value,
  headers: { "reflector.error.code": code, "reflector.original.topic": from },
});

function replay(kafka: Kafka, dryRun = false) {
  return replayDeadLetters({
    kafka,
    deadLetterTopic: "dlq",
    targetTopic: "in",
    sourceTopics: ["in", "retry"],
    tenancy: { binding, decode: (value) => createJsonCodec().decode(value) },
    groupId: "g.dlq-replay",
    dryRun,
    idleTimeoutMs: 2_000,
    logger: createLogger("silent"),
  });
}

describe("dlq replay under TENANT_TOPIC_BINDING", () => {
  it("never delivers an event to another tenant's topic, whatever the dead letter's header names", async () => {
    const { kafka, sent } = fakeKafka([
      // Refused for its tenant on arrival: no replay can make it right.
      letter("TENANT_TOPIC_MISMATCH", "agents.globex", event("globex")),
      // A dead letter naming globex's topic for acme's event (a forged origin).
      letter("SCHEMA_INVALID", "agents.globex", event("acme")),
      // An event whose tenant cannot be read is not sent to a tenant's topic either.
      letter("DECODE_FAILED", "agents.globex", "{not json"),
      // The one that belongs where it goes.
      letter("SCHEMA_INVALID", "agents.acme", event("acme")),
    ]);
    const summary = await replay(kafka);
    expect(sent).toEqual([{ topic: "agents.acme", value: event("acme") }]);
    expect(summary.replayed).toBe(1);
    expect(summary.skipped).toBe(3);
    const reasons = summary.items.map((item) => item.reason ?? item.action);
    expect(reasons[0]).toMatch(/^TENANT_TOPIC_MISMATCH: /);
    expect(reasons[1]).toBe(
      'TENANT_TOPIC_MISMATCH: tenantId "acme" arrived on topic agents.globex, which is bound to tenant "globex"',
    );
    expect(reasons[2]).toMatch(/^its tenant cannot be read/);
    expect(reasons[3]).toBe("replayed");
    expect(summary.byCode.TENANT_TOPIC_MISMATCH).toEqual({ replayed: 0, skipped: 1 });
  });

  it("checks in a dry run too, and never sends one to the unbound default topic", async () => {
    const { kafka, sent } = fakeKafka([letter("SCHEMA_INVALID", "retry", event("acme"))]);
    const summary = await replay(kafka, true);
    expect(sent).toEqual([]);
    expect(summary.items[0]?.action).toBe("skipped");
    expect(summary.items[0]?.reason).toMatch(/topic in is bound to no tenant/);
  });
});
