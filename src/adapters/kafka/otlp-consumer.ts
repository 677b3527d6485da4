import { setImmediate as nextTurn } from "node:timers/promises";
import { Partitioners, type Consumer, type Kafka, type KafkaMessage, type Producer } from "kafkajs";
import { classifyFailure, errorMessage, ReflectorError, type ErrorCode } from "../../domain/errors.js";
import type { OtlpSpan } from "../../domain/otlp/otlp-span.js";
import type { Logger } from "../../observability/logger.js";
import { deadLetterMessage } from "./failure-records.js";
import { fitsAlone, type SizeLimits } from "./record-size.js";
import { pause } from "./wakeup.js";

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
  const { kafka, logger } = options;
  const log = logger.child({ component: "otlp-consumer", topic: options.topic });
  let consumer: Consumer | null = null;
  let producer: Producer | null = null;
  let stopping = false;
  let wake = new AbortController();

  function deadLetter(partition: number, message: KafkaMessage, code: ErrorCode, reason: string) {
    return deadLetterMessage(
      { topic: options.topic, partition, message },
      { groupId: options.groupId, code, reason, now: new Date() },
      (m) => fitsAlone(m, options.deadLetterTopic, options.limits),
    );
  }

  /** Retries an outage (Postgres or Kafka away) until it passes; a bug or a stop ends the batch uncommitted. */
  async function untilDone(what: string, work: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await work();
        return;
      } catch (err) {
        if (stopping || classifyFailure(err) === "crash") throw err;
        const delayMs = Math.min(30_000, options.retryBaseMs * 2 ** Math.min(attempt - 1, 10));
        log.warn({ err, attempt, delayMs }, `${what} failed, retrying`);
        await pause(delayMs * (0.5 + Math.random() / 2), wake.signal);
      }
    }
  }

  return {
    async start(): Promise<void> {
      stopping = false;
      wake = new AbortController();
      producer = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
      });
      await producer.connect();
      const sessionTimeout = options.sessionTimeoutMs;
      consumer = kafka.consumer({
        groupId: options.groupId,
        allowAutoTopicCreation: false,
        sessionTimeout,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeout / 3)),
        retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
      });
      consumer.on(consumer.events.CRASH, (event) => {
        if (stopping) return;
        log.error({ err: event.payload.error }, "otlp consumer crashed");
        options.onCrash?.(event.payload.error);
      });
      await consumer.connect();
      await consumer.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning });
      await consumer.run({
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
              await producer?.send({ topic: options.deadLetterTopic, messages: dead });
            });
          }
          await payload.heartbeat();
          const last = batch.lastOffset();
          await consumer?.commitOffsets([
            { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() },
          ]);
          payload.resolveOffset(last);
          for (const count of counts) options.observe?.record(count.encoding, count.result);
        },
      });
    },

    async stop(): Promise<void> {
      stopping = true;
      wake.abort();
      await consumer?.disconnect();
      await producer?.disconnect();
      consumer = null;
      producer = null;
    },
  };
}

export type OtlpConsumer = ReturnType<typeof createOtlpConsumer>;
