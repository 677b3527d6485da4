import type { Consumer, IHeaders, Kafka, KafkaMessage, Producer } from "kafkajs";
import pRetry, { AbortError } from "p-retry";
import { TaskCompletedV1, type TaskCompleted } from "../../domain/contracts/index.js";
import { classifyFailure, errorMessage, ReflectorError, type ErrorCode } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { TaskProcessor } from "../../pipeline/task-processor.js";
import type { ValueCodec } from "../schema-registry/value-codec.js";
import type { OutputPublisher } from "./output-publisher.js";

export interface TaskConsumerOptions {
  kafka: Kafka;
  producer: Producer;
  groupId: string;
  topic: string;
  deadLetterTopic: string;
  fromBeginning: boolean;
  codec: ValueCodec;
  processor: TaskProcessor;
  publisher: OutputPublisher;
  logger: Logger;
  metrics: Metrics;
  /** Attempts for a failure that belongs to the event (a generator error) before it is dead-lettered. */
  maxAttempts: number;
  retryBaseMs: number;
}

// These say a dependency is down, not that the event is bad: retry without spending the event's
// budget, so an outage holds the partition (and its committed offset) instead of draining it to the DLQ.
const outageCodes = new Set<ErrorCode>([
  "STORE_UNAVAILABLE",
  "INDEX_UNAVAILABLE",
  "PUBLISH_FAILED",
  "REGISTRY_UNAVAILABLE",
]);

function isOutage(err: unknown): boolean {
  return err instanceof ReflectorError ? outageCodes.has(err.code) : classifyFailure(err) === "retry";
}

function codeOf(err: unknown): ErrorCode {
  return err instanceof ReflectorError ? err.code : "INTERNAL";
}

/** Zod issues as one readable line: `task.description: Too small; outcome: Invalid option`. */
function describeIssues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
}

export function parseTaskCompleted(raw: unknown): TaskCompleted {
  if (typeof raw === "object" && raw !== null && "schemaVersion" in raw && raw.schemaVersion !== 1) {
    throw new ReflectorError(
      "UNSUPPORTED_SCHEMA_VERSION",
      `schemaVersion ${JSON.stringify(raw.schemaVersion)} is not supported (this build reads 1)`,
    );
  }
  const parsed = TaskCompletedV1.safeParse(raw);
  if (!parsed.success) throw new ReflectorError("SCHEMA_INVALID", describeIssues(parsed.error));
  return parsed.data;
}

/**
 * Consumes `agent.task.completed` one message at a time per partition, in order, and commits a
 * message's offset only after its outputs (or its dead letter) are acknowledged by Kafka.
 */
export function createTaskConsumer(options: TaskConsumerOptions) {
  const { kafka, producer, codec, processor, publisher, logger, metrics } = options;
  let consumer: Consumer | null = null;
  let joined = false;
  const shutdown = new AbortController();
  const stopping = () => shutdown.signal.aborted;

  async function deadLetter(
    partition: number,
    message: KafkaMessage,
    code: ErrorCode,
    reason: string,
    log: Logger,
  ): Promise<void> {
    const headers: IHeaders = {
      ...message.headers,
      "reflector.error.code": code,
      "reflector.error.message": reason.slice(0, 2000),
      "reflector.original.topic": options.topic,
      "reflector.original.partition": String(partition),
      "reflector.original.offset": message.offset,
      "reflector.consumer.group": options.groupId,
      "reflector.failed.at": new Date().toISOString(),
    };
    await pRetry(
      () =>
        producer.send({
          topic: options.deadLetterTopic,
          messages: [{ key: message.key, value: message.value, headers }],
        }),
      { retries: Infinity, maxTimeout: 30_000, signal: shutdown.signal },
    );
    metrics.deadLetters.inc({ code });
    metrics.events.inc({ result: "dead_lettered" });
    log.warn({ code, reason }, "event dead-lettered");
  }

  async function handle(
    partition: number,
    message: KafkaMessage,
    heartbeat: () => Promise<void>,
  ): Promise<void> {
    const log = logger.child({ topic: options.topic, partition, offset: message.offset });
    if (!message.value || message.value.length === 0) {
      await deadLetter(partition, message, "DECODE_FAILED", "empty value (tombstone)", log);
      return;
    }
    let event: TaskCompleted;
    try {
      event = parseTaskCompleted(await codec.decode(message.value));
    } catch (err) {
      if (classifyFailure(err) !== "dead-letter") throw err;
      await deadLetter(partition, message, codeOf(err), errorMessage(err), log);
      return;
    }

    const eventLog = log.child({ tenantId: event.tenantId, loopId: event.loopId, eventId: event.eventId });
    try {
      await pRetry(
        async () => {
          const result = await processor.process(event);
          await publisher.publish(result.outputs, message.headers);
          metrics.events.inc({ result: result.status });
          eventLog.info(
            {
              status: result.status,
              verdict: result.verdict,
              decision: result.decision,
              outputs: result.outputs.length,
            },
            "event processed",
          );
        },
        {
          retries: options.maxAttempts - 1,
          minTimeout: options.retryBaseMs,
          maxTimeout: 30_000,
          randomize: true,
          signal: shutdown.signal,
          shouldRetry: ({ error }) => classifyFailure(error) === "retry",
          shouldConsumeRetry: ({ error }) => !isOutage(error),
          onFailedAttempt: async ({ error, attemptNumber }) => {
            metrics.retries.inc({ code: codeOf(error) });
            eventLog.warn({ err: error, attempt: attemptNumber }, "processing failed; retrying");
            await heartbeat();
          },
        },
      );
    } catch (err) {
      if (shutdown.signal.aborted) throw err;
      const action = classifyFailure(err);
      if (action === "crash") throw err;
      const code = action === "retry" ? "RETRIES_EXHAUSTED" : codeOf(err);
      await deadLetter(partition, message, code, `${codeOf(err)}: ${errorMessage(err)}`, eventLog);
    }
  }

  return {
    async start(): Promise<void> {
      consumer = kafka.consumer({
        groupId: options.groupId,
        sessionTimeout: 30_000,
        heartbeatInterval: 3_000,
        readUncommitted: false,
        allowAutoTopicCreation: false,
        // A crash ends the process; the orchestrator restarts it from the last committed offset.
        retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
      });
      consumer.on(consumer.events.GROUP_JOIN, () => {
        joined = true;
        metrics.ready.set(1);
      });
      for (const event of [consumer.events.CRASH, consumer.events.STOP, consumer.events.DISCONNECT]) {
        consumer.on(event, () => {
          joined = false;
          metrics.ready.set(0);
        });
      }
      await consumer.connect();
      await consumer.subscribe({ topics: [options.topic], fromBeginning: options.fromBeginning });
      await consumer.run({
        autoCommit: true,
        autoCommitInterval: 1000,
        eachBatchAutoResolve: false,
        eachBatch: async (payload) => {
          const { batch } = payload;
          const heartbeat = () => payload.heartbeat();
          for (const message of batch.messages) {
            if (!payload.isRunning() || payload.isStale() || stopping()) break;
            metrics.inFlight.inc();
            try {
              await handle(batch.partition, message, heartbeat);
            } catch (err) {
              // Shutting down mid-retry: leave the offset unresolved so the next owner redoes it.
              if (stopping()) break;
              throw err;
            } finally {
              metrics.inFlight.dec();
            }
            payload.resolveOffset(message.offset);
            await heartbeat();
          }
          await payload.commitOffsetsIfNecessary();
        },
      });
    },

    isReady: () => joined,

    onCrash(listener: (error: Error) => void): void {
      consumer?.on(consumer.events.CRASH, (event) => {
        listener(event.payload.error);
      });
    },

    /** Stops fetching, lets the message in hand finish (or abandons its retries), commits, leaves the group. */
    async stop(): Promise<void> {
      if (!consumer) return;
      const current = consumer;
      consumer = null;
      joined = false;
      shutdown.abort(new AbortError("shutting down"));
      await current.disconnect();
    },
  };
}

export type TaskConsumer = ReturnType<typeof createTaskConsumer>;
