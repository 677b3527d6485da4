import type { Tracer } from "@opentelemetry/api";
import { createLagPoller } from "../adapters/kafka/admin/lag-poller.js";
import { createEventRunner, type EventRunner } from "../adapters/kafka/event-runner.js";
import type { KafkaClient } from "../adapters/kafka/kafka-client.js";
import { OutageGate } from "../adapters/kafka/outage-gate.js";
import { createOutputPublisher, type OutputPublisher } from "../adapters/kafka/output-publisher.js";
import { createProducer, type KafkaProducer } from "../adapters/kafka/producers.js";
import { readTopicLimits, type SizeLimits } from "../adapters/kafka/record-size.js";
import { createTaskConsumer, type TaskConsumer } from "../adapters/kafka/task-consumer.js";
import { boundTopics, watchBoundTopics } from "../adapters/kafka/tenant-topics.js";
import { traceRuns } from "../adapters/kafka/traced-event-runner.js";
import { createTransactionalCommitter } from "../adapters/kafka/transactional-committer.js";
import { createRedisCrashCounter } from "../adapters/redis/redis-crash-counter.js";
import { buildLogOffsets, defaultMaxMessageBytes, type buildRedis } from "./builders.js";
import type { Config } from "../config/config.js";
import { createConsumerMetrics, type ConsumerMetrics } from "../observability/consumer-metrics.js";
import { createLagMetrics } from "../observability/lag-metrics.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { ValueCodec } from "../pipeline/ports.js";
import type { TaskProcessor } from "../pipeline/task-processor.js";

/** The outputs as the pipeline publishes them, on `producer` (the consumer's and the HTTP API's alike). */
export function buildOutputPublisher(
  config: Config,
  producer: KafkaProducer,
  codec: ValueCodec,
): OutputPublisher {
  return createOutputPublisher({
    producer,
    codec,
    source: `/reflector/${config.kafka.groupId}`,
    topics: {
      reflectionAccepted: config.topics.reflectionAccepted,
      reflectionRejected: config.topics.reflectionRejected,
      loopDecision: config.topics.loopDecision,
    },
  });
}

export interface TaskConsumerDeps {
  kafka: KafkaClient;
  redis: ReturnType<typeof buildRedis>;
  codec: ValueCodec;
  processor: TaskProcessor;
  metrics: Metrics;
  logger: Logger;
  tracer?: Tracer | undefined;
}

/** The size limits of the outputs: each topic's max.message.bytes once read (`readLimits`). */
function outputLimits(config: Config) {
  // Each output topic's max.message.bytes, read at start; until then the broker's default.
  let topicBytes: (topic: string) => number = () => defaultMaxMessageBytes;
  const limits: SizeLimits = {
    topicBytes: (topic) => topicBytes(topic),
    requestBytes: config.consumer.maxRequestBytes,
  };
  return {
    limits,
    /** Reads each output topic's max.message.bytes (the OTLP bridge's topics too, when it runs). */
    async read(kafka: KafkaClient): Promise<void> {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const t = config.topics;
        const outputs = [
          t.reflectionAccepted,
          t.reflectionRejected,
          t.loopDecision,
          t.deadLetter,
          t.retry,
          // The OTLP bridge's events are budgeted against the topic they go to.
          ...(config.otlp.topic !== undefined ? [config.otlp.taskTopic, config.otlp.topic] : []),
        ];
        topicBytes = await readTopicLimits(admin, outputs, defaultMaxMessageBytes);
      } finally {
        await admin.disconnect();
      }
    },
  };
}

/** The event runner (retries, dead letters, the crash counter), in the event's spans with a tracer. */
function buildEventRunner(
  config: Config,
  deps: TaskConsumerDeps,
  parts: {
    publisher: OutputPublisher;
    limits: SizeLimits;
    outage: OutageGate;
    consumerMetrics: ConsumerMetrics;
  },
): EventRunner {
  const runner = createEventRunner({
    groupId: config.kafka.groupId,
    retryTopic: config.topics.retry,
    deadLetterTopic: config.topics.deadLetter,
    codec: deps.codec,
    processor: deps.processor,
    ...parts,
    crashes: createRedisCrashCounter(deps.redis, {
      keyPrefix: config.redis.keyPrefix,
      groupId: config.kafka.groupId,
      windowMs: 10 * 60_000,
    }),
    maxCrashesPerRecord: config.consumer.maxCrashesPerRecord,
    maxCrashingRecords: config.consumer.maxCrashingRecords,
    logger: deps.logger,
    metrics: deps.metrics,
    maxAttempts: config.handler.maxAttempts,
    retryBaseMs: config.handler.retryBaseMs,
    retryTopicDelayMs: config.consumer.retryTopicDelayMs,
    ...(config.tenancy.binding ? { tenantBinding: config.tenancy.binding } : {}),
  });
  return deps.tracer
    ? traceRuns(runner, deps.tracer, {
        groupId: config.kafka.groupId,
        deadLetterTopic: config.topics.deadLetter,
        retryTopic: config.topics.retry,
      })
    : runner;
}

/**
 * With TENANT_TOPIC_BINDING the input topics are the bound ones the cluster has (read at start,
 * and again every TENANT_TOPIC_REFRESH_MS: a new one restarts the process to subscribe to it);
 * the lag is then watched on them. Without it, nothing to resolve.
 */
function boundInputs(config: Config, kafka: KafkaClient, logger: Logger, lagTopics: string[]) {
  const binding = config.tenancy.binding;
  if (!binding) return null;
  const admin = kafka.admin();
  return {
    binding,
    admin,
    resolveTopics: async () => {
      await admin.connect();
      const found = await boundTopics(admin, binding);
      lagTopics.splice(0, lagTopics.length, ...found, config.topics.retry);
      logger.info({ topics: found }, "consuming the topics bound to tenants");
      return found;
    },
  };
}

/**
 * The task consumer and what it runs on: the event runner (retries, the outage gate, dead
 * letters, the crash counter), the transactional committer, the record-size limits and, with
 * TENANT_TOPIC_BINDING, the bound input topics (read at start, and watched).
 */
export function buildTaskConsumer(config: Config, deps: TaskConsumerDeps) {
  const { kafka, codec, metrics, logger } = deps;
  // The outputs as the consumer encodes them for its transactions (its producer is the committer's).
  const publisher = buildOutputPublisher(config, createProducer(kafka), codec);
  const consumerMetrics = createConsumerMetrics(metrics.registry);
  const sizes = outputLimits(config);
  const { limits } = sizes;
  // Idempotent producers must retry without limit, or a retry exhausted mid-sequence breaks ordering.
  // Transactional: outputs, dead letters and consumed offsets commit together (docs/delivery-guarantees.md).
  const committer = createTransactionalCommitter({
    // Short first retry: right after a commit the coordinator answers CONCURRENT_TRANSACTIONS for a
    // few ms while it writes the markers; the client's default 200 ms would cap transactions/s.
    newProducer: () =>
      createProducer(kafka, { transactionalId: config.consumer.transactionalId, initialRetryTime: 10 }),
    groupId: config.kafka.groupId,
    limits,
    logger,
    transactions: consumerMetrics.transactions,
    replacements: consumerMetrics.producerReplacements,
  });
  // The outage gate pauses and resumes the consumer built right after it.
  const outage = new OutageGate({
    onEnter: (code) => {
      consumerMetrics.paused.set(1);
      logger.warn({ code }, "dependency outage: pausing consumption");
      consumer.pause();
    },
    onLeave: (code, pausedMs) => {
      logger.info({ code, pausedMs }, "dependency back: resuming consumption");
      consumerMetrics.paused.set(0);
      consumer.resume();
    },
  });
  const runner = buildEventRunner(config, deps, { publisher, limits, outage, consumerMetrics });
  const lagTopics = [config.topics.taskCompleted, config.topics.retry];
  const bound = boundInputs(config, kafka, logger, lagTopics);
  const consumer: TaskConsumer = createTaskConsumer({
    kafka,
    committer,
    runner,
    outage,
    groupId: config.kafka.groupId,
    topic: config.topics.taskCompleted,
    ...(bound ? { resolveTopics: bound.resolveTopics } : {}),
    retryTopic: config.topics.retry,
    consumerMetrics,
    maxInFlight: config.consumer.maxInFlight,
    maxInFlightPerPartition: config.consumer.maxInFlightPerPartition,
    maxInFlightPerTenant: config.consumer.maxInFlightPerTenant,
    roundMs: config.consumer.batchRoundMs,
    handOverAfterMs: config.consumer.handOverAfterMs,
    maxHeldPerPartition: config.consumer.maxHeldPerPartition,
    maxHeldBytesPerPartition: config.consumer.maxHeldBytesPerPartition,
    sessionTimeoutMs: config.consumer.sessionTimeoutMs,
    rejoinDeadlineMs: config.consumer.rejoinDeadlineMs,
    fromBeginning: config.kafka.fromBeginning,
    logger,
    metrics,
  });

  // The lag of the input topics (the bound ones, once read) and of the retry topic.
  const logOffsets = buildLogOffsets(kafka);
  const lagPoller = createLagPoller({
    admin: kafka.admin(),
    logOffsets: (topic) => logOffsets.offsets(topic),
    metrics: createLagMetrics(metrics.registry),
    logger,
    intervalMs: config.lagRefreshMs,
    groupId: config.kafka.groupId,
    topics: lagTopics,
    fromBeginning: config.kafka.fromBeginning,
  });

  return {
    consumer,
    committer,
    limits,
    lagPoller,

    /** Reads each output topic's max.message.bytes (the OTLP bridge's topics too, when it runs). */
    readLimits: () => sizes.read(kafka),

    /**
     * With TENANT_TOPIC_BINDING and a refresh interval: watches for topics bound since the start,
     * which `onNew` answers (by restarting the process). Null when there is nothing to watch.
     */
    watchBoundTopics(onNew: (error: Error) => void): { stop(): void } | null {
      if (!bound || config.tenancy.topicRefreshMs <= 0) return null;
      return watchBoundTopics({
        list: () => boundTopics(bound.admin, bound.binding),
        subscribed: consumer.inputTopics(),
        intervalMs: config.tenancy.topicRefreshMs,
        onNew: (topics) => {
          logger.warn({ topics }, "new topics bound to tenants: restarting to subscribe to them");
          onNew(new Error(`new bound topics ${topics.join(", ")}: restart to subscribe`));
        },
        onError: (err) => {
          logger.warn({ err }, "could not list the topics bound to tenants");
        },
      });
    },

    /** Closes the admin clients (the lag poller's once it stopped, the bound topics'). */
    closeAdmins(): Promise<unknown>[] {
      return [
        lagPoller.stop().then(() => logOffsets.close()),
        bound?.admin.disconnect() ?? Promise.resolve(),
      ];
    },
  };
}

export type BuiltTaskConsumer = ReturnType<typeof buildTaskConsumer>;
