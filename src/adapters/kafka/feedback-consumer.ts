import { Partitioners, type Consumer, type Kafka, type KafkaMessage, type Producer } from "kafkajs";
import { ReflectionFeedbackV1, type ReflectionFeedback } from "../../domain/contracts/index.js";
import { classifyFailure, errorMessage, ReflectorError, type ErrorCode } from "../../domain/errors.js";
import type { FeedbackInput, FeedbackResult, ValueCodec } from "../../pipeline/ports.js";
import type { Logger } from "../../observability/logger.js";
import { deadLetterMessage } from "./failure-records.js";
import { fitsAlone, type SizeLimits } from "./record-size.js";
import { pause } from "./wakeup.js";

export interface FeedbackConsumerOptions {
  kafka: Kafka;
  /** Its own group (`<KAFKA_GROUP_ID>.feedback`): feedback never waits behind slow reflections. */
  groupId: string;
  topic: string;
  deadLetterTopic: string;
  /** Size limits of the dead-letter topic: a dead letter too large for it goes without its value. */
  limits: SizeLimits;
  fromBeginning: boolean;
  codec: ValueCodec;
  /** The same store call as `POST /api/v1/feedback`, idempotent by feedback id. */
  record(tenantId: string, input: FeedbackInput): Promise<FeedbackResult>;
  logger: Logger;
  observe?: {
    recorded(rating: "up" | "down", result: "recorded" | "duplicate"): void;
    deadLettered(code: ErrorCode): void;
  };
  retryBaseMs?: number;
  /** The same session timeout as the task consumer, so a killed member leaves the group as quickly. */
  sessionTimeoutMs?: number;
  /** A crash while running (not while stopping): the app stops and exits, like the task consumer. */
  onCrash?(error: Error): void;
}

export function parseReflectionFeedback(raw: unknown): ReflectionFeedback {
  if (typeof raw === "object" && raw !== null && "schemaVersion" in raw && raw.schemaVersion !== 1) {
    throw new ReflectorError(
      "UNSUPPORTED_SCHEMA_VERSION",
      `schemaVersion ${JSON.stringify(raw.schemaVersion)} is not supported (this build reads 1)`,
    );
  }
  const parsed = ReflectionFeedbackV1.safeParse(raw);
  if (!parsed.success) {
    const reason = parsed.error.issues
      .slice(0, 10)
      .map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`)
      .join("; ");
    throw new ReflectorError("SCHEMA_INVALID", reason);
  }
  return parsed.data;
}

/**
 * Reads `reflection.feedback` one message at a time per partition (recording feedback is one
 * short transaction; there is nothing slow to overlap). Bad messages go to the DLQ with the same
 * headers as bad task events; outages are retried until they pass, so nothing is skipped.
 */
export function createFeedbackConsumer(options: FeedbackConsumerOptions) {
  const { kafka, codec, logger } = options;
  const log = logger.child({ component: "feedback-consumer", topic: options.topic });
  const retryBaseMs = options.retryBaseMs ?? 200;
  let consumer: Consumer | null = null;
  let producer: Producer | null = null;
  let stopping = false;
  // Wakes a retry back-off when the app stops, so shutdown never waits out a 30 s sleep.
  let wake = new AbortController();

  async function handle(message: KafkaMessage): Promise<void> {
    if (!message.value) throw new ReflectorError("DECODE_FAILED", "the message has no value");
    const feedback = parseReflectionFeedback(await codec.decode(message.value));
    const result = await options.record(feedback.tenantId, {
      feedbackId: feedback.feedbackId,
      reflectionId: feedback.reflectionId,
      rating: feedback.rating,
      comment: feedback.comment ?? null,
      userId: feedback.userId ?? null,
      source: "kafka",
      // A vote dated in the future would outrank every later one; it counts as given now.
      at: new Date(Math.min(Date.parse(feedback.occurredAt), Date.now())),
    });
    if (result.status === "not_found") {
      throw new ReflectorError(
        "FEEDBACK_UNKNOWN_REFLECTION",
        `tenant ${feedback.tenantId} has no reflection ${feedback.reflectionId}`,
      );
    }
    if (result.status === "conflict") {
      throw new ReflectorError(
        "FEEDBACK_CONFLICT",
        `feedbackId ${feedback.feedbackId} was already recorded for reflection ${result.reflectionId} rated ${result.rating}`,
      );
    }
    options.observe?.recorded(feedback.rating, result.status);
  }

  async function deadLetter(
    topic: string,
    partition: number,
    message: KafkaMessage,
    code: ErrorCode,
    reason: string,
  ) {
    const dead = deadLetterMessage(
      { topic, partition, message },
      { groupId: options.groupId, code, reason, now: new Date() },
      (m) => fitsAlone(m, options.deadLetterTopic, options.limits),
    );
    if (!producer) throw new Error("feedback consumer is not started");
    await producer.send({
      topic: options.deadLetterTopic,
      messages: [dead],
    });
    options.observe?.deadLettered(code);
    log.warn({ code, reason, partition, offset: message.offset }, "feedback dead-lettered");
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
        // Idempotent producers must retry without limit, or an exhausted retry breaks ordering.
        retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
      });
      await producer.connect();
      const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
      consumer = kafka.consumer({
        groupId: options.groupId,
        allowAutoTopicCreation: false,
        sessionTimeout,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeout / 3)),
        // kafkajs restarts a crashed consumer by default; a restart racing a stop kept the process
        // alive after "reflector stopped" (a join answered on a closed socket: "write after end").
        // No restarts: a crash while running goes to onCrash and the process exits to be restarted.
        retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
      });
      consumer.on(consumer.events.CRASH, (event) => {
        if (stopping) return;
        log.error({ err: event.payload.error }, "feedback consumer crashed");
        options.onCrash?.(event.payload.error);
      });
      await consumer.connect();
      await consumer.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning });
      await consumer.run({
        eachMessage: async ({ topic, partition, message }) => {
          for (let attempt = 1; ; attempt += 1) {
            try {
              await handle(message);
              return;
            } catch (err) {
              const action = classifyFailure(err);
              const code: ErrorCode = err instanceof ReflectorError ? err.code : "INTERNAL";
              if (action === "dead-letter") {
                await deadLetter(topic, partition, message, code, errorMessage(err));
                return;
              }
              // Stopping, or a bug: leave the offset uncommitted so the message is read again.
              if (action === "crash" || stopping) throw err;
              const delayMs = Math.min(30_000, retryBaseMs * 2 ** Math.min(attempt - 1, 10));
              log.warn({ err, attempt, delayMs, offset: message.offset }, "feedback failed, retrying");
              await pause(delayMs * (0.5 + Math.random() / 2), wake.signal);
            }
          }
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

export type FeedbackConsumer = ReturnType<typeof createFeedbackConsumer>;
