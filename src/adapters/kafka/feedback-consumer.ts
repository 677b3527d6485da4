import type { Kafka, KafkaMessage, Producer } from "kafkajs";
import { parseReflectionFeedback } from "../../domain/contracts/index.js";
import { classifyFailure, errorMessage, ReflectorError, type ErrorCode } from "../../domain/errors.js";
import type { FeedbackInput, FeedbackResult, ValueCodec } from "../../pipeline/ports.js";
import type { Logger } from "../../observability/logger.js";
import { deadLetterMessage } from "./failure-records.js";
import { fitsAlone, type SizeLimits } from "./record-size.js";
import { createSimpleConsumer } from "./simple-consumer.js";

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

/**
 * Reads `reflection.feedback` one message at a time per partition (recording feedback is one
 * short transaction; there is nothing slow to overlap). Bad messages go to the DLQ with the same
 * headers as bad task events; outages are retried until they pass, so nothing is skipped.
 */
export function createFeedbackConsumer(options: FeedbackConsumerOptions) {
  const { codec, logger } = options;
  const log = logger.child({ component: "feedback-consumer", topic: options.topic });

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
    producer: Producer,
    source: { topic: string; partition: number; message: KafkaMessage },
    err: unknown,
  ) {
    const code: ErrorCode = err instanceof ReflectorError ? err.code : "INTERNAL";
    const reason = errorMessage(err);
    const dead = deadLetterMessage(source, { groupId: options.groupId, code, reason, now: new Date() }, (m) =>
      fitsAlone(m, options.deadLetterTopic, options.limits),
    );
    await producer.send({ topic: options.deadLetterTopic, messages: [dead] });
    options.observe?.deadLettered(code);
    log.warn(
      { code, reason, partition: source.partition, offset: source.message.offset },
      "feedback dead-lettered",
    );
  }

  return createSimpleConsumer({
    kafka: options.kafka,
    name: "feedback consumer",
    groupId: options.groupId,
    topic: options.topic,
    fromBeginning: options.fromBeginning,
    sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
    retryBaseMs: options.retryBaseMs ?? 200,
    logger: log,
    onCrash: (error) => options.onCrash?.(error),
    handler: ({ producer, untilDone }) => ({
      eachMessage: async ({ topic, partition, message }) => {
        // A message its contract or the store refuses comes back as the error to dead-letter; an
        // outage is retried until it passes; a bug or a stop leaves the offset uncommitted.
        const refused = await untilDone(
          "feedback",
          async () => {
            try {
              await handle(message);
              return null;
            } catch (err) {
              if (classifyFailure(err) === "dead-letter") return err;
              throw err;
            }
          },
          { offset: message.offset },
        );
        if (refused !== null) await deadLetter(producer, { topic, partition, message }, refused);
      },
    }),
  });
}

export type FeedbackConsumer = ReturnType<typeof createFeedbackConsumer>;
