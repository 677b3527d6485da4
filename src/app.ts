import type { Tracer } from "@opentelemetry/api";
import { createOutputPublisher } from "./adapters/kafka/output-publisher.js";
import { createProducer, type KafkaProducer } from "./adapters/kafka/producers.js";
import { createTaskConsumer, type TaskConsumer } from "./adapters/kafka/task-consumer.js";
import { createEventRunner } from "./adapters/kafka/event-runner.js";
import { traceRuns } from "./adapters/kafka/traced-event-runner.js";
import { OutageGate } from "./adapters/kafka/outage-gate.js";
import { readTopicLimits, type SizeLimits } from "./adapters/kafka/record-size.js";
import { createTransactionalCommitter } from "./adapters/kafka/transactional-committer.js";
import { createRedisCrashCounter } from "./adapters/redis/redis-crash-counter.js";
import { createHeuristicGenerator } from "./adapters/llm/heuristic-generator.js";
import { createHeuristicAnswerEvaluator } from "./adapters/llm/heuristic-answer-evaluator.js";
import { createRedisTenantBudget } from "./adapters/redis/tenant-token-budget.js";
import { boundTopics, watchBoundTopics } from "./adapters/kafka/tenant-topics.js";
import { createSpendMetrics } from "./observability/spend-metrics.js";
import { createRedisSignatureIndex } from "./adapters/redis/redis-signature-index.js";
import type { Config } from "./config/config.js";
import { defaultGuardrailConfig } from "./domain/guardrails/guardrail-config.js";
import { defaultQualityConfig } from "./domain/quality/quality-config.js";
import { createHttpServer } from "./http/http-server.js";
import { createApiKeyring, parseApiKeys } from "./http/api-keys.js";
import { createFeedbackConsumer } from "./adapters/kafka/feedback-consumer.js";
import { createFeedbackMetrics } from "./observability/feedback-metrics.js";
import { createLoopCompleter } from "./pipeline/complete-loop.js";
import type { Logger } from "./observability/logger.js";
import { createLlmMetrics } from "./observability/llm-metrics.js";
import { createConsumerMetrics } from "./observability/consumer-metrics.js";
import { createMetrics } from "./observability/metrics.js";
import { withSpans } from "./observability/traced-stage-timer.js";
import { createLagMetrics } from "./observability/lag-metrics.js";
import { createLagPoller } from "./adapters/kafka/admin/lag-poller.js";
import { createKafkaHealthCheck } from "./adapters/kafka/kafka-health.js";
import { createQualityMetrics } from "./observability/quality-metrics.js";
import type { Clock, ReflectionGenerator } from "./pipeline/ports.js";
import {
  buildCodec,
  buildKafka,
  buildLlm,
  buildLogOffsets,
  buildMaintenance,
  buildPostgresPool,
  buildLessonSplits,
  buildReadStores,
  buildRedis,
  buildReflectionStore,
  systemClock,
  assertSchemaCurrent,
  withDeadline,
  defaultMaxMessageBytes,
} from "./builders.js";
import { createTaskProcessor } from "./pipeline/task-processor.js";
import { createPgLessonStore } from "./adapters/postgres/pg-lesson-store.js";
import { createPgFeedbackStore } from "./adapters/postgres/pg-feedback-store.js";
import { createPgLessonRetrievals } from "./adapters/postgres/pg-lesson-retrievals.js";
import { countAppliedOutcomes } from "./observability/applied-outcome-metrics.js";
import { createLessonIndex } from "./features/lessons/lessons-for-task-index.js";
import { createLessonsForTask } from "./features/lessons/lessons-for-task.js";
import { createMaintenanceSchedule } from "./maintenance/maintenance-schedule.js";
import { buildOtlpBridge, buildOtlpHttpIngest } from "./otlp-bridge-app.js";

export interface AppOverrides {
  generator?: ReflectionGenerator;
  clock?: Clock;
  /** Reflector's spans go to this tracer (src/observability/tracing.ts); none are made without it. */
  tracer?: Tracer;
}

/**
 * The composition root, with its builders (builders.ts): builds every adapter from config and
 * wires the pipeline, the HTTP API and the maintenance schedule.
 */
export function createApp(config: Config, logger: Logger, overrides: AppOverrides = {}) {
  const metrics = createMetrics();
  const pool = buildPostgresPool(config, { logger });
  const probePool = buildPostgresPool(config, {
    max: 1,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 60_000,
    logger,
    logLevel: "debug",
  });
  // Fails commands fast while Redis is away; the consumer's retry loop owns waiting for it.
  const redis = buildRedis(config, logger);
  const kafka = buildKafka(config, logger);
  // Idempotent producers must retry without limit, or a retry exhausted mid-sequence breaks ordering.
  // Transactional: outputs, dead letters and consumed offsets commit together (docs/delivery-guarantees.md).
  const newTransactionalProducer = (): KafkaProducer =>
    // Short first retry: right after a commit the coordinator answers CONCURRENT_TRANSACTIONS for a
    // few ms while it writes the markers; the client's default 200 ms would cap transactions/s.
    createProducer(kafka, { transactionalId: config.consumer.transactionalId, initialRetryTime: 10 });
  const codec = buildCodec(config);

  const llmMetrics = createLlmMetrics(metrics.registry, {
    inputPerMillionUsd: config.openai.inputPricePerMTokUsd,
    outputPerMillionUsd: config.openai.outputPricePerMTokUsd,
  });
  // LLM spend limits: a per-tenant token budget shared by every pod (in Redis), when one is set.
  const spendMetrics = createSpendMetrics(metrics.registry, { maxTenants: config.spend.metricsMaxTenants });
  const budget =
    config.spend.tenantTokenBudget === null
      ? null
      : createRedisTenantBudget(redis, {
          keyPrefix: config.redis.keyPrefix,
          budgetTokens: config.spend.tenantTokenBudget,
          windowMs: config.spend.budgetWindowMs,
          overBudget: config.spend.overBudget,
          observer: spendMetrics,
        });
  const llm = buildLlm(config, {
    ...(budget ? { spend: budget } : {}),
    observer: llmMetrics,
    onCircuitChange: ({ state, openForMs }) => {
      llmMetrics.setCircuitOpen(state !== "closed");
      if (state === "open") logger.warn({ state }, "llm circuit opened");
      else logger.warn({ state, openForMs }, `llm circuit ${state}`);
    },
  });
  spendMetrics.observeSlots(llm.slots);
  const generator = overrides.generator ?? llm.generator;
  const guardrails = { ...defaultGuardrailConfig, ...config.guardrails };
  // One store for the pipeline and the HTTP loop endpoints: it holds no state beyond the pool.
  const reflectionStore = buildReflectionStore(pool, llm.embedder);
  // The lessons served to a loop through lessons-for-task, read back when its completion arrives.
  const lessonRetrievals = createPgLessonRetrievals(pool);
  const processor = createTaskProcessor({
    store: reflectionStore,
    answerEvaluator: llm.answerEvaluator,
    observer: createQualityMetrics(metrics.registry, metrics.qualityScore),
    index: createRedisSignatureIndex(redis, { keyPrefix: config.redis.keyPrefix }),
    generator,
    embedder: llm.embedder,
    clock: overrides.clock ?? systemClock,
    timer: overrides.tracer ? withSpans(metrics.timer, overrides.tracer) : metrics.timer,
    quality: {
      ...defaultQualityConfig,
      maxAttempts: config.quality.maxAttempts,
      storageMinQuality: config.quality.storageMinQuality,
      depth: { ...defaultQualityConfig.depth, mode: config.quality.depthMode },
    },
    guardrails,
    mode: config.mode,
    memory: config.memory,
    // A task's outcome counts for or against the lessons its parent's decision carried and those
    // it retrieved for its loop id.
    appliedOutcomes: countAppliedOutcomes(
      { ...createPgFeedbackStore(pool), lessonsRetrievedBy: lessonRetrievals.lessonsRetrievedBy },
      metrics.registry,
    ),
    ...(budget
      ? {
          spend: {
            gate: budget,
            generator: createHeuristicGenerator(),
            answerEvaluator: createHeuristicAnswerEvaluator(),
          },
        }
      : {}),
  });
  // The consumer's transactional producer and the HTTP API's plain one publish the same outputs.
  const publisherOn = (on: KafkaProducer) =>
    createOutputPublisher({
      producer: on,
      codec,
      source: `/reflector/${config.kafka.groupId}`,
      topics: {
        reflectionAccepted: config.topics.reflectionAccepted,
        reflectionRejected: config.topics.reflectionRejected,
        loopDecision: config.topics.loopDecision,
      },
    });
  // The outputs as the consumer encodes them for its transactions (its producer is the committer's).
  const publisher = publisherOn(createProducer(kafka));
  const consumerMetrics = createConsumerMetrics(metrics.registry);
  // Each output topic's max.message.bytes, read at start; until then the broker's default.
  let topicBytes: (topic: string) => number = () => defaultMaxMessageBytes;
  const limits: SizeLimits = {
    topicBytes: (topic) => topicBytes(topic),
    requestBytes: config.consumer.maxRequestBytes,
  };
  const committer = createTransactionalCommitter({
    newProducer: newTransactionalProducer,
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
  const untracedRunner = createEventRunner({
    groupId: config.kafka.groupId,
    retryTopic: config.topics.retry,
    deadLetterTopic: config.topics.deadLetter,
    codec,
    processor,
    publisher,
    limits,
    outage,
    crashes: createRedisCrashCounter(redis, {
      keyPrefix: config.redis.keyPrefix,
      groupId: config.kafka.groupId,
      windowMs: 10 * 60_000,
    }),
    maxCrashesPerRecord: config.consumer.maxCrashesPerRecord,
    maxCrashingRecords: config.consumer.maxCrashingRecords,
    logger,
    metrics,
    consumerMetrics,
    maxAttempts: config.handler.maxAttempts,
    retryBaseMs: config.handler.retryBaseMs,
    retryTopicDelayMs: config.consumer.retryTopicDelayMs,
    ...(config.tenancy.binding ? { tenantBinding: config.tenancy.binding } : {}),
  });
  // With TENANT_TOPIC_BINDING the input topics are the bound ones the cluster has (read at start,
  // and again every TENANT_TOPIC_REFRESH_MS: a new one restarts the process to subscribe to it).
  const binding = config.tenancy.binding;
  const lagTopics = [config.topics.taskCompleted, config.topics.retry];
  const topicAdmin = binding ? kafka.admin() : null;
  let topicWatch: { stop(): void } | null = null;
  const resolveTopics =
    binding && topicAdmin
      ? async () => {
          await topicAdmin.connect();
          const found = await boundTopics(topicAdmin, binding);
          lagTopics.splice(0, lagTopics.length, ...found, config.topics.retry);
          logger.info({ topics: found }, "consuming the topics bound to tenants");
          return found;
        }
      : undefined;
  const runner = overrides.tracer
    ? traceRuns(untracedRunner, overrides.tracer, {
        groupId: config.kafka.groupId,
        deadLetterTopic: config.topics.deadLetter,
        retryTopic: config.topics.retry,
      })
    : untracedRunner;
  const consumer: TaskConsumer = createTaskConsumer({
    kafka,
    committer,
    runner,
    outage,
    groupId: config.kafka.groupId,
    topic: config.topics.taskCompleted,
    ...(resolveTopics ? { resolveTopics } : {}),
    retryTopic: config.topics.retry,
    consumerMetrics,
    maxInFlight: config.consumer.maxInFlight,
    maxInFlightPerPartition: config.consumer.maxInFlightPerPartition,
    sessionTimeoutMs: config.consumer.sessionTimeoutMs,
    rejoinDeadlineMs: config.consumer.rejoinDeadlineMs,
    fromBeginning: config.kafka.fromBeginning,
    logger,
    metrics,
  });

  const kafkaHealth = createKafkaHealthCheck({
    admin: kafka.admin({ retry: { retries: 0 } }),
    isProducerConnected: () => committer.isConnected(),
    timeoutMs: 2_000,
  });
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

  let stopping = false;
  const apiClock = overrides.clock ?? systemClock;
  const readStores = buildReadStores(pool, apiClock);
  const feedbackMetrics = createFeedbackMetrics(metrics.registry, {
    source: readStores.lessons,
    refreshMs: config.http.lessonMetricsRefreshMs,
    onError: (err) => {
      logger.warn({ err }, "lesson effectiveness metrics could not be refreshed");
    },
  });
  const crashListeners: ((error: Error) => void)[] = [];
  const feedbackConsumer = createFeedbackConsumer({
    kafka,
    groupId: `${config.kafka.groupId}.feedback`,
    topic: config.topics.reflectionFeedback,
    deadLetterTopic: config.topics.deadLetter,
    limits,
    fromBeginning: config.kafka.fromBeginning,
    codec,
    record: (tenantId, input) => readStores.feedback.recordFeedback(tenantId, input),
    logger,
    observe: {
      recorded: feedbackMetrics.recorded,
      deadLettered: (code) => {
        metrics.deadLetters.inc({ code });
      },
    },
    retryBaseMs: config.handler.retryBaseMs,
    sessionTimeoutMs: config.consumer.sessionTimeoutMs,
    onCrash: (error) => {
      for (const listener of crashListeners) listener(error);
    },
  });
  // A decision made over HTTP consumes no offset, so it needs no transaction: a plain idempotent
  // producer publishes it on loop.decision like the Kafka path's decisions.
  const apiProducer = createProducer(kafka);
  const apiPublisher = publisherOn(apiProducer);
  // OTLP over HTTP (POST /v1/traces) onto the topic the OTLP bridge reads, when the bridge runs.
  const otlpHttp = config.otlp.topic
    ? buildOtlpHttpIngest(config, config.otlp.topic, { kafka, limits, registry: metrics.registry })
    : null;
  const http = createHttpServer({
    api: {
      keys: createApiKeyring(parseApiKeys(config.http.apiKeys)),
      stores: { ...readStores, lessonSplits: buildLessonSplits(pool, config, redis) },
      completeLoop: createLoopCompleter({
        store: reflectionStore,
        guardrails,
        clock: apiClock,
        publish: (outputs) => apiPublisher.publish(outputs, undefined),
      }),
      commonIssues: (tenantId) => reflectionStore.commonIssues(tenantId),
      lessonsForTask: createLessonsForTask({
        index: createLessonIndex({
          source: createPgLessonStore(pool, { clock: apiClock }),
          embeddingModel: llm.embedder.name,
          clock: apiClock,
        }),
        embedder: llm.embedder,
        clock: apiClock,
        retrievals: lessonRetrievals,
      }),
      clock: apiClock,
      onFeedback: feedbackMetrics.recorded,
      logger,
      allowCleartextKeys: config.http.allowCleartextApiKeys,
      ...(otlpHttp ? { otlp: otlpHttp.ingest } : {}),
    },
    registry: metrics.registry,
    isConsuming: () => consumer.isReady(),
    isStopping: () => stopping,
    dependencies: [
      // The transactional producer carries outputs and offsets: without it nothing can commit.
      { name: "kafka", check: () => kafkaHealth.check() },
      // Its own one-connection pool: probes never queue behind (or take from) the pipeline's.
      { name: "postgres", check: async () => (await probePool.query("SELECT 1")).rowCount === 1 },
      {
        name: "redis",
        check: async () => {
          await redis.ping();
          return true;
        },
      },
      // Without the registry, wire-format inputs cannot be decoded nor outputs encoded.
      ...(codec.check ? [{ name: "schema-registry", check: codec.check }] : []),
    ],
  });

  // The OTLP ingest bridge runs beside the processor when OTLP_TOPIC is set.
  const otlpBridge = config.otlp.topic
    ? buildOtlpBridge(config, config.otlp.topic, {
        kafka,
        pool,
        codec,
        limits,
        logger,
        registry: metrics.registry,
        clock: overrides.clock ?? systemClock,
      })
    : null;

  // Dreaming (full mode only) and pruning on a timer, one replica at a time (advisory locks).
  const maintenance = buildMaintenance(config, {
    pool,
    redis,
    generator,
    embedder: llm.embedder,
    clock: overrides.clock ?? systemClock,
    reflections: reflectionStore,
  });
  const m = config.maintenance;
  const maintenanceSchedule = createMaintenanceSchedule({
    exclusive: maintenance.exclusive,
    logger,
    jobs: [
      {
        name: "dream",
        intervalMs: config.mode === "full" ? m.dreamIntervalMs : 0,
        run: () => maintenance.dream({ tenantId: null, minImportance: m.dreamMinImportance, dryRun: false }),
      },
      {
        name: "prune",
        intervalMs: m.pruneIntervalMs,
        run: () =>
          maintenance.prune({
            tenantId: null,
            olderThanDays: m.pruneOlderThanDays,
            maxImportance: m.pruneMaxImportance,
            dryRun: false,
          }),
      },
    ],
  });

  return {
    config,
    metrics,
    maintenance,
    llmMetrics,
    http,
    processor,
    lagPoller,
    generatorName: generator.name,
    /** The name stored with each reflection's vector (`reflections.embedding_model`). */
    embedderName: llm.embedder.name,

    async start(): Promise<void> {
      await assertSchemaCurrent(pool);
      await redis.connect();
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
      await committer.connect();
      await apiProducer.connect();
      await otlpHttp?.connect();
      await http.listen({ host: config.http.host, port: config.http.port });
      await consumer.start();
      if (binding && topicAdmin && config.tenancy.topicRefreshMs > 0) {
        topicWatch = watchBoundTopics({
          list: () => boundTopics(topicAdmin, binding),
          subscribed: consumer.inputTopics(),
          intervalMs: config.tenancy.topicRefreshMs,
          onNew: (topics) => {
            logger.warn({ topics }, "new topics bound to tenants: restarting to subscribe to them");
            const error = new Error(`new bound topics ${topics.join(", ")}: restart to subscribe`);
            for (const listener of crashListeners) listener(error);
          },
          onError: (err) => {
            logger.warn({ err }, "could not list the topics bound to tenants");
          },
        });
      }
      await feedbackConsumer.start();
      await otlpBridge?.start();
      lagPoller.start();
      const scheduled = maintenanceSchedule.start();
      if (scheduled.length) logger.info({ jobs: scheduled }, "maintenance jobs scheduled");
      logger.info(
        {
          topic: config.topics.taskCompleted,
          groupId: config.kafka.groupId,
          generator: generator.name,
          codec: codec.format,
        },
        "reflector started",
      );
    },

    /** The consumer or the feedback consumer stopped for good; may be registered before `start`. */
    onCrash(listener: (error: Error) => void): void {
      consumer.onCrash(listener);
      crashListeners.push(listener);
      otlpBridge?.onCrash(listener);
    },

    /** Reverse order of start, within the deadline: readiness off, drain and commit, close clients. */
    async stop(): Promise<void> {
      if (stopping) return;
      stopping = true;
      metrics.ready.set(0);
      const deadline = config.shutdownDeadlineMs;
      await maintenanceSchedule.stop();
      topicWatch?.stop();
      try {
        // The consumer drains in-flight work for most of the deadline, leaving time to close clients.
        await withDeadline(consumer.stop(Math.max(500, deadline - 3_000)), deadline, "draining the consumer");
      } catch (err) {
        logger.error({ err }, "consumer did not stop cleanly");
      }
      await feedbackConsumer.stop().catch((err: unknown) => {
        logger.error({ err }, "feedback consumer did not stop cleanly");
      });
      await otlpBridge?.stop().catch((err: unknown) => {
        logger.error({ err }, "otlp bridge did not stop cleanly");
      });
      await Promise.allSettled([
        lagPoller.stop().then(() => logOffsets.close()),
        kafkaHealth.close(),
        topicAdmin?.disconnect(),
        committer.disconnect(),
        apiProducer.disconnect(),
        otlpHttp?.disconnect(),
        http.close(),
        pool.end(),
        probePool.end(),
        redis.quit().catch(() => {
          redis.disconnect();
        }),
      ]);
      logger.info("reflector stopped");
    },
  };
}

export type App = ReturnType<typeof createApp>;
