import type { Kafka, KafkaMessage } from "kafkajs";
import { describe, expect, it } from "vitest";
import { createOtlpConsumer } from "../../../../src/adapters/kafka/otlp-consumer.js";
import { createLogger } from "../../../../src/observability/logger.js";

/** A consumer group of one batch of `count` records, handed to eachBatch once. */
function fakeKafka(count: number) {
  const messages = Array.from(
    { length: count },
    (_, i) =>
      ({
        key: null,
        value: Buffer.from(`record-${String(i)}`),
        headers: {},
        offset: String(i),
        timestamp: "0",
        attributes: 0,
      }) satisfies KafkaMessage,
  );
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const kafka = {
    producer: () => ({
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      send: () => Promise.resolve(),
    }),
    consumer: () => ({
      events: { CRASH: "crash" },
      on: () => undefined,
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      subscribe: () => Promise.resolve(),
      commitOffsets: () => Promise.resolve(),
      run: ({ eachBatch }: { eachBatch: (payload: unknown) => Promise<void> }) => {
        void eachBatch({
          batch: { topic: "otlp", partition: 0, messages, lastOffset: () => String(count - 1) },
          isRunning: () => true,
          isStale: () => false,
          heartbeat: () => Promise.resolve(),
          resolveOffset: () => undefined,
        }).then(done);
        return Promise.resolve();
      },
    }),
  };
  return { kafka: kafka as unknown as Kafka, finished };
}

describe("OTLP consumer", () => {
  it("lets the event loop run between two decoded records (heartbeats, other partitions, the sweep)", async () => {
    const { kafka, finished } = fakeKafka(3);
    const turns: boolean[] = [];
    let turned = false;
    const consumer = createOtlpConsumer({
      kafka,
      groupId: "g.otlp",
      topic: "otlp",
      deadLetterTopic: "dlq",
      limits: { topicBytes: () => 1_048_588, requestBytes: 1_048_576 },
      fromBeginning: true,
      sessionTimeoutMs: 30_000,
      // Decoding is synchronous: what another turn of the event loop does shows between two calls.
      decode: () => {
        turns.push(turned);
        turned = false;
        setImmediate(() => {
          turned = true;
        });
        return { encoding: "json", spans: [] };
      },
      ingest: () => Promise.resolve(),
      logger: createLogger("silent"),
      retryBaseMs: 1,
    });
    await consumer.start();
    await finished;
    await consumer.stop();
    expect(turns).toEqual([false, true, true]);
  });
});
