import type { Consumer, ConsumerRunConfig, Kafka, Producer } from "kafkajs";
import { classifyFailure } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import { backoffMs, maxBackoffMs } from "./failure-policy.js";
import { createProducer } from "./producers.js";
import { transportFailure } from "./transport-errors.js";
import { pause } from "./wakeup.js";

/** What a simple consumer's handler works with while it runs. */
export interface SimpleConsumerRun {
  consumer: Consumer;
  /** The idempotent producer of its dead letters, connected before the first message. */
  producer: Producer;
  /** Retries `work` through outages until it succeeds (see `createSimpleConsumer`). */
  untilDone: <T>(what: string, work: () => Promise<T>, context?: Record<string, unknown>) => Promise<T>;
}

export interface SimpleConsumerOptions {
  kafka: Kafka;
  /** Names the consumer in its logs ("feedback consumer", "otlp consumer"). */
  name: string;
  groupId: string;
  topic: string;
  fromBeginning: boolean;
  /** The same session timeout as the task consumer, so a killed member leaves the group as quickly. */
  sessionTimeoutMs: number;
  /** The first retry's delay; it doubles up to 30 s, with jitter (`backoffMs`). */
  retryBaseMs: number;
  logger: Logger;
  /** A crash while running (not while stopping): the app stops and exits to be restarted. */
  onCrash?(error: Error): void;
  /** The consumer's `run` configuration (`eachMessage` or `eachBatch`), built once started. */
  handler(run: SimpleConsumerRun): ConsumerRunConfig;
}

/**
 * The skeleton of a consumer with its own group and one input topic, and no transaction (the
 * feedback consumer, the OTLP bridge's): an idempotent producer for its dead letters, a consumer
 * that is never restarted by kafkajs (a crash while running goes to `onCrash` and the process
 * exits to be restarted — a restart racing a stop kept the process alive after it stopped), and
 * a retry loop for outages that a stop wakes at once, so shutdown never waits out a 30 s back-off.
 * The handler decides what is dead-lettered and when offsets are committed.
 */
export function createSimpleConsumer(options: SimpleConsumerOptions) {
  const { kafka } = options;
  const log = options.logger;
  let consumer: Consumer | null = null;
  let producer: Producer | null = null;
  let stopping = false;
  let wake = new AbortController();

  /** An outage is retried until it passes; a bug (`crash`) or a stop ends the work unfinished. */
  async function untilDone<T>(
    what: string,
    work: () => Promise<T>,
    context: Record<string, unknown> = {},
  ): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await work();
      } catch (err) {
        if (stopping || classifyFailure(transportFailure(err)) === "crash") throw err;
        const delayMs = backoffMs(attempt, { baseMs: options.retryBaseMs, maxMs: maxBackoffMs });
        log.warn({ err, attempt, delayMs, ...context }, `${what} failed, retrying`);
        await pause(delayMs, wake.signal);
      }
    }
  }

  return {
    async start(): Promise<void> {
      stopping = false;
      wake = new AbortController();
      const deadLetters = createProducer(kafka);
      producer = deadLetters;
      await deadLetters.connect();
      const sessionTimeout = options.sessionTimeoutMs;
      const reader = kafka.consumer({
        groupId: options.groupId,
        allowAutoTopicCreation: false,
        sessionTimeout,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeout / 3)),
        retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
      });
      consumer = reader;
      reader.on(reader.events.CRASH, (event) => {
        if (stopping) return;
        log.error({ err: event.payload.error }, `${options.name} crashed`);
        options.onCrash?.(event.payload.error);
      });
      await reader.connect();
      await reader.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning });
      await reader.run(options.handler({ consumer: reader, producer: deadLetters, untilDone }));
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

export type SimpleConsumer = ReturnType<typeof createSimpleConsumer>;
