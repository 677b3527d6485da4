import type { Kafka, Message } from "kafkajs";
import { describe, expect, it } from "vitest";
import { createBridgePublisher } from "../../../../src/adapters/kafka/bridge-publisher.js";
import { recordBytes } from "../../../../src/adapters/kafka/record-size.js";
import type { BridgedEvent } from "../../../../src/pipeline/otlp-bridge-ports.js";
import { taskEvent } from "../../../support/task-events.js";

/** A producer that records each send, and refuses (as the broker does) records over `brokerBytes`. */
function fakeKafka(brokerBytes: number) {
  const sends: { topic: string; messages: Message[] }[] = [];
  const producer = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: ({ topic, messages }: { topic: string; messages: Message[] }) => {
      if (messages.some((m) => recordBytes(m) > brokerBytes)) {
        return Promise.reject(
          Object.assign(
            new Error(
              "The request included a message larger than the max message size the server will accept",
            ),
            { type: "MESSAGE_TOO_LARGE" },
          ),
        );
      }
      sends.push({ topic, messages });
      return Promise.resolve([]);
    },
  };
  return { kafka: { producer: () => producer } as unknown as Kafka, sends };
}

const bridged = (bytes: number): BridgedEvent => {
  const event = taskEvent({ tenantId: "acme", task: { description: "x".repeat(bytes) } });
  return { event, traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` };
};

function publisher(kafka: Kafka, topicBytes: number) {
  return createBridgePublisher({
    kafka,
    topic: "in",
    deadLetterTopic: "dlq",
    sourceTopic: "otlp",
    groupId: "g.otlp",
    limits: { topicBytes: (topic) => (topic === "in" ? topicBytes : 1_048_588), requestBytes: 1_048_576 },
    encode: (event) => Promise.resolve(Buffer.from(JSON.stringify(event))),
  });
}

describe("bridge publisher", () => {
  it("splits the events into sends each under the topic's limit, in order", async () => {
    const { kafka, sends } = fakeKafka(1_000_000);
    const events = Array.from({ length: 10 }, () => bridged(20_000));
    const refused = await publisher(kafka, 100_000).publish(events);
    expect(refused.size).toBe(0);
    const toInput = sends.filter((s) => s.topic === "in");
    expect(toInput.length).toBeGreaterThan(1);
    for (const send of toInput) {
      expect(send.messages.reduce((sum, m) => sum + recordBytes(m), 0)).toBeLessThan(100_000);
    }
    expect(toInput.flatMap((s) => s.messages.map((m) => m.headers?.ce_id))).toEqual(
      events.map((e) => e.event.eventId),
    );
  });

  it("dead-letters, alone, an event its topic would refuse or refuses, and publishes the others", async () => {
    // The topic's limit as read is 200 KB; the broker takes 50 KB (its limit was lowered since).
    const { kafka, sends } = fakeKafka(50_000);
    const small = bridged(1_000);
    const refusedByBroker = bridged(80_000);
    const tooLarge = bridged(300_000);
    const refused = await publisher(kafka, 200_000).publish([small, refusedByBroker, tooLarge]);
    expect([...refused]).toEqual(expect.arrayContaining([refusedByBroker, tooLarge]));
    expect(refused.has(small)).toBe(false);
    expect(
      sends.filter((s) => s.topic === "in").flatMap((s) => s.messages.map((m) => m.headers?.ce_id)),
    ).toEqual([small.event.eventId]);
    const letters = sends.filter((s) => s.topic === "dlq").flatMap((s) => s.messages);
    expect(letters.map((m) => m.headers?.["reflector.error.code"])).toEqual([
      "OUTPUT_TOO_LARGE",
      "OUTPUT_TOO_LARGE",
    ]);
    expect(letters.every((m) => m.value === null && m.headers?.["reflector.otlp.tenant-id"] === "acme")).toBe(
      true,
    );
  });

  it("reports a broker that cannot be reached as a publish failure to retry, not as a refusal", async () => {
    const producer = {
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      send: () =>
        Promise.reject(
          Object.assign(new Error("Connection error: connect ECONNREFUSED"), { retriable: true }),
        ),
    };
    const kafka = { producer: () => producer } as unknown as Kafka;
    await expect(publisher(kafka, 1_000_000).publish([bridged(10)])).rejects.toMatchObject({
      code: "PUBLISH_FAILED",
    });
  });
});
