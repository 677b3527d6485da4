import { createFeedbackConsumer, type FeedbackConsumer } from "../adapters/kafka/feedback-consumer.js";
import type { KafkaClient } from "../adapters/kafka/kafka-client.js";
import type { SizeLimits } from "../adapters/kafka/record-size.js";
import type { Config } from "../config/config.js";
import type { FeedbackStore } from "../features/feedback/feedback-store.js";
import type { LessonStore } from "../features/lessons/lesson-store.js";
import { createFeedbackMetrics } from "../observability/feedback-metrics.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { ValueCodec } from "../pipeline/ports.js";

/**
 * The consumer of lesson feedback (its own group), dead-lettering what its contract refuses, and
 * the metrics of the lessons' effectiveness it feeds (the HTTP API's feedback feeds them too).
 */
export function buildFeedbackConsumer(
  config: Config,
  deps: {
    kafka: KafkaClient;
    codec: ValueCodec;
    limits: SizeLimits;
    stores: { feedback: FeedbackStore; lessons: LessonStore };
    metrics: Metrics;
    logger: Logger;
    onCrash: (error: Error) => void;
  },
): { consumer: FeedbackConsumer; feedbackMetrics: ReturnType<typeof createFeedbackMetrics> } {
  const { logger, stores } = deps;
  const feedbackMetrics = createFeedbackMetrics(deps.metrics.registry, {
    source: stores.lessons,
    refreshMs: config.http.lessonMetricsRefreshMs,
    onError: (err) => {
      logger.warn({ err }, "lesson effectiveness metrics could not be refreshed");
    },
  });
  const consumer = createFeedbackConsumer({
    kafka: deps.kafka,
    groupId: `${config.kafka.groupId}.feedback`,
    topic: config.topics.reflectionFeedback,
    deadLetterTopic: config.topics.deadLetter,
    limits: deps.limits,
    fromBeginning: config.kafka.fromBeginning,
    codec: deps.codec,
    record: (tenantId, input) => stores.feedback.recordFeedback(tenantId, input),
    logger,
    observe: {
      recorded: feedbackMetrics.recorded,
      deadLettered: (code) => {
        deps.metrics.deadLetters.inc({ code });
      },
    },
    retryBaseMs: config.handler.retryBaseMs,
    sessionTimeoutMs: config.consumer.sessionTimeoutMs,
    onCrash: deps.onCrash,
  });
  return { consumer, feedbackMetrics };
}
