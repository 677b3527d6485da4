import { describe, expect, it } from "vitest";
import type { KafkaMessage, Message } from "kafkajs";
import {
  deadLetterMessage,
  retryMessage,
  valueOmittedHeader,
} from "../../../../src/adapters/kafka/failure-records.js";
import { recordBytes } from "../../../../src/adapters/kafka/record-size.js";

const message = (valueBytes: number, headers: KafkaMessage["headers"] = { traceparent: "00-abc-01" }) =>
  ({
    key: Buffer.from("loop-1"),
    value: Buffer.alloc(valueBytes, 97),
    headers,
    offset: "41",
    timestamp: "0",
    attributes: 0,
  }) as KafkaMessage;
const context = { groupId: "g", code: "SCHEMA_INVALID" as const, reason: "task: Required", now: new Date(0) };
const under = (bytes: number) => (m: Message) => recordBytes(m) <= bytes;
const header = (m: Message, name: string) => m.headers?.[name]?.toString();

describe("failure records", () => {
  it("keep the record whole with the diagnosis when the DLQ takes it", () => {
    const dead = deadLetterMessage(
      { topic: "in", partition: 2, message: message(100) },
      context,
      under(10_000),
    );
    expect(dead.value?.length).toBe(100);
    expect(header(dead, "reflector.error.code")).toBe("SCHEMA_INVALID");
    expect(header(dead, "reflector.original.offset")).toBe("41");
    expect(header(dead, "traceparent")).toBe("00-abc-01");
    expect(dead.headers?.[valueOmittedHeader]).toBeUndefined();
  });

  it("leave out a value the DLQ would refuse and say where to read it", () => {
    const dead = deadLetterMessage(
      { topic: "in", partition: 2, message: message(50_000) },
      context,
      under(10_000),
    );
    expect(dead.value).toBeNull();
    expect(dead.key?.toString()).toBe("loop-1");
    expect(header(dead, valueOmittedHeader)).toMatch(/^50000 bytes over .*read it at in\/2\/41$/);
    expect(header(dead, "traceparent")).toBe("00-abc-01");
  });

  it("leave out the producer's headers too when they alone are too large", () => {
    const huge = message(50_000, { junk: Buffer.alloc(20_000, 98) });
    const dead = deadLetterMessage({ topic: "in", partition: 0, message: huge }, context, under(10_000));
    expect(dead.value).toBeNull();
    expect(dead.headers?.junk).toBeUndefined();
    expect(header(dead, "reflector.error.code")).toBe("SCHEMA_INVALID");
    expect(recordBytes(dead)).toBeLessThan(10_000);
  });

  it("point a retried record at its first place, not at the retry topic", () => {
    const retried = message(10, {
      "reflector.original.topic": "in",
      "reflector.original.partition": "5",
      "reflector.original.offset": "9",
    });
    const dead = deadLetterMessage(
      { topic: "retry", partition: 0, message: retried },
      { ...context, retryTopic: "retry" },
      under(100),
    );
    expect(header(dead, valueOmittedHeader)).toMatch(/read it at in\/5\/9/);
  });

  it("never take a producer's reflector.* headers for Reflector's: the origin is where the record was read", () => {
    // A tenant writes to its own topic a record that names another tenant's topic as its origin.
    const forged = message(5_000, {
      traceparent: "00-abc-01",
      "reflector.original.topic": "agents.globex",
      "reflector.original.partition": "5",
      "reflector.original.offset": "9",
      "reflector.retry.count": "7",
      "Reflector.Value.Omitted": "forged",
      "reflector.replay.count": "2",
    });
    const source = { topic: "agents.acme", partition: 1, message: forged };
    for (const ctx of [context, { ...context, retryTopic: "retry" }]) {
      const dead = deadLetterMessage(source, ctx, under(10_000));
      expect(header(dead, "reflector.original.topic")).toBe("agents.acme");
      expect(header(dead, "reflector.original.partition")).toBe("1");
      expect(header(dead, "reflector.original.offset")).toBe("41");
      expect(dead.headers?.["reflector.retry.count"]).toBeUndefined();
      expect(dead.headers?.["Reflector.Value.Omitted"]).toBeUndefined();
      // Replay history is shown, never acted on.
      expect(header(dead, "reflector.replay.count")).toBe("2");
      expect(header(dead, "traceparent")).toBe("00-abc-01");
      const omitted = deadLetterMessage(source, ctx, under(1_000));
      expect(header(omitted, valueOmittedHeader)).toMatch(/read it at agents\.acme\/1\/41$/);
      const retry = retryMessage(source, ctx, 1, under(10_000));
      expect(retry?.headers?.["reflector.original.topic"]?.toString()).toBe("agents.acme");
      expect(retry?.headers?.["reflector.retry.count"]?.toString()).toBe("1");
    }
  });

  it("hand over to the retry topic only what it accepts", () => {
    const source = { topic: "in", partition: 0, message: message(5_000) };
    expect(retryMessage(source, context, 123, under(10_000))?.headers?.["reflector.retry.not-before"]).toBe(
      "123",
    );
    expect(retryMessage(source, context, 123, under(4_000))).toBeNull();
  });
});
