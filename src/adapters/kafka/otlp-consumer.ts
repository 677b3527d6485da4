import { setImmediate as nextTurn } from "node:timers/promises";
import type { Kafka, KafkaMessage } from "kafkajs";
import { classifyFailure, errorMessage, ReflectorError, type ErrorCode } from "../../domain/errors.js";
import type { OtlpSpan } from "../../domain/otlp/otlp-span.js";
import type { Logger } from "../../observability/logger.js";
import { deadLetterMessage } from "./failure-records.js";
import { fitsAlone, type SizeLimits } from "./record-size.js";
import { createSimpleConsumer } from "./simple-consumer.js";

export interface OtlpConsumerOptions {
  kafka: Kafka;
  /** The bridge's own group (`<KAFKA_GROUP_ID>.otlp` by default). */
  groupId: string;
  topic: string;
  deadLetterTopic: string;
  limits: SizeLimits;
  fromBeginning: boolean;
  sessionTimeoutMs: number;
  /** The spans of one record; throws a dead-letter ReflectorError (DECODE_FAILED, SCHEMA_INVALID) for malformed OTLP. */
  decode(value: Buffer): { encoding: string; spans: OtlpSpan[] };
  /** Stores spans durably; the batch's offsets are committed only after it resolves. */
  ingest(spans: OtlpSpan[]): Promise<void>;
  logger: Logger;
  retryBaseMs: number;
  observe?: {
    record(encoding: string, result: "ok" | "dead_lettered"): void;
  };
  /** A crash while running (not while stopping): the app stops and exits to be restarted. */
  onCrash?(error: Error): void;
}

/**
 * Reads OTLP trace records (one `ExportTraceServiceRequest` each) batch by batch: decodes every
 * record (malformed ones go to the dead-letter topic with the reason), stores the batch's spans in
 * one transaction, and only then commits the batch's offsets. A kill at any point re-reads what was
 * not committed; spans already stored are stored once.
 */
export function createOtlpConsumer(options: OtlpConsumerOptions) {
  const { logger } = options;
  const log = logger.child({ component: "otlp-consumer", topic: options.topic });

  function deadLetter(partition: number, message: KafkaMessage, code: ErrorCode, reason: string) {
    return deadLetterMessage(
      { topic: options.topic, partition, message },
      { groupId: options.groupId, code, reason, now: new Date() },
      (m) => fitsAlone(m, options.deadLetterTopic, options.limits),
    );
  }

  return createSimpleConsumer({
    kafka: options.kafka,
    name: "otlp consumer",
    groupId: options.groupId,
    topic: options.topic,
    fromBeginning: options.fromBeginning,
    sessionTimeoutMs: options.sessionTimeoutMs,
    retryBaseMs: options.retryBaseMs,
    logger: log,
    onCrash: (error) => options.onCrash?.(error),
    handler: ({ consumer, producer, untilDone }) => ({
      // Partitions are independent (each commits its own offsets after its own spans are
      // stored): while one batch waits for Postgres, the next partition's is decoded.
      partitionsConsumedConcurrently: 6,
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async (payload) => {
        const { batch } = payload;
        if (!payload.isRunning() || payload.isStale() || batch.messages.length === 0) return;
        const decoded: { message: KafkaMessage; encoding: string; spans: OtlpSpan[] }[] = [];
        const dead: ReturnType<typeof deadLetter>[] = [];
        const counts: { encoding: string; result: "ok" | "dead_lettered" }[] = [];
        const refuse = (message: KafkaMessage, err: unknown) => {
          const code: ErrorCode = err instanceof ReflectorError ? err.code : "DECODE_FAILED";
          const reason = errorMessage(err);
          dead.push(deadLetter(batch.partition, message, code, reason));
          counts.push({ encoding: "unknown", result: "dead_lettered" });
          log.warn(
            { code, reason, partition: batch.partition, offset: message.offset },
            "otlp record dead-lettered",
          );
        };
        for (const message of batch.messages) {
          if (!message.value || message.value.length === 0) continue;
          // Decoding is synchronous CPU work (a record is up to a megabyte of spans): between two
          // records the event loop runs, so heartbeats, other partitions and the sweep go on.
          await nextTurn();
          if (!payload.isRunning() || payload.isStale()) return;
          try {
            decoded.push({ message, ...options.decode(message.value) });
          } catch (err) {
            refuse(message, err);
          }
        }
        // The batch's spans in one statement. Should Postgres refuse its data (it never should:
        // the decoder makes text storable), each record is stored alone and the one it refuses
        // is dead-lettered, instead of retrying the batch for ever.
        const batchStore = { stored: false };
        await untilDone("storing spans", async () => {
          try {
            await options.ingest(decoded.flatMap((record) => record.spans));
            batchStore.stored = true;
          } catch (err) {
            if (classifyFailure(err) !== "dead-letter") throw err;
          }
        });
        for (const record of batchStore.stored ? [] : decoded) {
          await untilDone("storing spans", async () => {
            try {
              await options.ingest(record.spans);
            } catch (err) {
              if (classifyFailure(err) !== "dead-letter") throw err;
              refuse(record.message, err);
              record.encoding = "";
            }
          });
        }
        for (const record of decoded) {
          if (record.encoding) counts.push({ encoding: record.encoding, result: "ok" });
        }
        // Then the dead letters, then the offsets: a crash anywhere before the commit reads the
        // batch again (a dead letter may then be written twice, a span is never lost).
        if (dead.length > 0) {
          await untilDone("dead-lettering otlp records", async () => {
            await producer.send({ topic: options.deadLetterTopic, messages: dead });
          });
        }
        await payload.heartbeat();
        const last = batch.lastOffset();
        await consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() },
        ]);
        payload.resolveOffset(last);
        for (const count of counts) options.observe?.record(count.encoding, count.result);
      },
    }),
  });
}

export type OtlpConsumer = ReturnType<typeof createOtlpConsumer>;
