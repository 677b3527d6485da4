import type { Tracer } from "@opentelemetry/api";
import {
  assertSchemaCurrent,
  buildCodec,
  buildKafka,
  buildMaintenance,
  buildPostgresPool,
  buildProbePool,
  buildReadStores,
  buildRedis,
  buildReflectionStore,
  systemClock,
  withDeadline,
} from "./builders.js";
import { buildFeedbackConsumer } from "./feedback-consumer.js";
import { buildHttpApi } from "./http-api.js";
import { buildMaintenanceSchedule } from "./maintenance-schedule.js";
import { buildSpendLimitedLlm } from "./spend-limited-llm.js";
import { buildTaskConsumer } from "./task-consumer.js";
import { buildTaskProcessor } from "./task-processor.js";
import type { Config } from "../config/config.js";
import { evaluatorCostWarning } from "../config/llm-settings.js";
import { defaultGuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import type { Logger } from "../observability/logger.js";
import { createMetrics, type Metrics } from "../observability/metrics.js";
import { buildOtlpBridge } from "./otlp-bridge-app.js";
import { warmUpLogged } from "./warm-up.js";
import type { Clock, ReflectionGenerator } from "../pipeline/ports.js";

export interface AppOverrides {
  generator?: ReflectionGenerator;
  clock?: Clock;
  /** Reflector's spans go to this tracer (src/observability/tracing.ts); none are made without it. */
  tracer?: Tracer;
}

/** The clients everything else talks through, one of each, from config. */
function buildClients(config: Config, logger: Logger) {
  return {
    pool: buildPostgresPool(config, { logger }),
    probePool: buildProbePool(config, logger),
    // Fails commands fast while Redis is away; the consumer's retry loop owns waiting for it.
    redis: buildRedis(config, logger),
    kafka: buildKafka(config, logger),
    codec: buildCodec(config),
  };
}

/** Closes the clients of `buildClients` but Kafka's (each Kafka client is closed by its owner). */
function closeClients({ pool, probePool, redis }: ReturnType<typeof buildClients>): Promise<unknown>[] {
  return [
    pool.end(),
    probePool.end(),
    redis.quit().catch(() => {
      redis.disconnect();
    }),
  ];
}

/** The task processor, and what the HTTP API and maintenance share with it (the LLM, the store). */
function buildProcessing(
  config: Config,
  clients: ReturnType<typeof buildClients>,
  parts: { metrics: Metrics; clock: Clock; overrides: AppOverrides; logger: Logger },
) {
  const { pool, redis } = clients;
  const { metrics, clock, overrides } = parts;
  const { llm, llmMetrics, budget } = buildSpendLimitedLlm(config, {
    redis,
    registry: metrics.registry,
    logger: parts.logger,
  });
  const generator = overrides.generator ?? llm.generator;
  const guardrails = { ...defaultGuardrailConfig, ...config.guardrails };
  // One store for the pipeline and the HTTP loop endpoints: it holds no state beyond the pool.
  const reflectionStore = buildReflectionStore(pool, llm.embedder);
  const processor = buildTaskProcessor(config, {
    pool,
    redis,
    store: reflectionStore,
    llm,
    generator,
    budget,
    guardrails,
    metrics,
    clock,
    tracer: overrides.tracer,
    logger: parts.logger,
  });
  return { llm, llmMetrics, generator, guardrails, reflectionStore, processor };
}

/** Waits for a part to stop; a failure is logged, and the rest of the stop goes on. */
async function stopLogged(
  stopping: Promise<unknown> | undefined,
  logger: Logger,
  what: string,
): Promise<void> {
  try {
    await stopping;
  } catch (err) {
    logger.error({ err }, `${what} did not stop cleanly`);
  }
}

/**
 * The composition root: builds the clients from config and wires the pipeline, the consumers,
 * the HTTP API and the maintenance schedule with the builders beside it (builders.ts and the rest of src/composition/).
 * It starts them in order and stops them in reverse.
 */
export function createApp(config: Config, logger: Logger, overrides: AppOverrides = {}) {
  const metrics = createMetrics();
  const clock = overrides.clock ?? systemClock;
  const clients = buildClients(config, logger);
  const { pool, redis, codec } = clients;
  const { llm, llmMetrics, generator, guardrails, reflectionStore, processor } = buildProcessing(
    config,
    clients,
    { metrics, clock, overrides, logger },
  );
  const tasks = buildTaskConsumer(config, {
    ...clients,
    processor,
    metrics,
    logger,
    tracer: overrides.tracer,
  });
  const { consumer, committer, limits, lagPoller } = tasks;

  let stopping = false;
  let topicWatch: { stop(): void } | null = null;
  const readStores = buildReadStores(pool, clock);
  const crashListeners: ((error: Error) => void)[] = [];
  const crashed = (error: Error) => {
    for (const listener of crashListeners) listener(error);
  };
  const { consumer: feedbackConsumer, feedbackMetrics } = buildFeedbackConsumer(config, {
    ...clients,
    limits,
    stores: readStores,
    metrics,
    logger,
    onCrash: crashed,
  });
  // The OTLP ingest bridge runs beside the processor when OTLP_TOPIC is set.
  const otlpBridge = config.otlp.topic
    ? buildOtlpBridge(config, config.otlp.topic, {
        ...clients,
        limits,
        logger,
        registry: metrics.registry,
        clock,
      })
    : null;
  const api = buildHttpApi(config, {
    ...clients,
    limits,
    registry: metrics.registry,
    logger,
    reflectionStore,
    readStores,
    feedbackMetrics,
    guardrails,
    embedder: llm.embedder,
    lessonCheck: llm.lessonCheck,
    clock,
    processor,
    isProducerConnected: () => committer.isConnected(),
    isConsuming: () => consumer.isReady(),
    isStopping: () => stopping,
    otlpBridge,
    metrics,
  });
  const http = api.http;

  const maintenance = buildMaintenance(config, {
    ...clients,
    generator,
    clock,
    embedder: llm.embedder,
    reflections: reflectionStore,
  });
  const maintenanceSchedule = buildMaintenanceSchedule(config, maintenance, logger);

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
      await tasks.readLimits();
      await committer.connect();
      await api.connect();
      await http.listen({ host: config.http.host, port: config.http.port });
      await warmUpLogged(config, { pool, embedder: llm.embedder, logger });
      await consumer.start();
      topicWatch = tasks.watchBoundTopics(crashed);
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
      const costly = evaluatorCostWarning(config);
      if (costly) logger.warn({ model: config.openai.model }, costly);
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
      // The consumer drains in-flight work for most of the deadline, leaving time to close clients.
      const draining = withDeadline(
        consumer.stop(Math.max(500, deadline - 3_000)),
        deadline,
        "draining the consumer",
      );
      await stopLogged(draining, logger, "consumer");
      await stopLogged(feedbackConsumer.stop(), logger, "feedback consumer");
      await stopLogged(otlpBridge?.stop(), logger, "otlp bridge");
      await Promise.allSettled([
        ...tasks.closeAdmins(),
        ...api.closeClients(),
        committer.disconnect(),
        http.close(),
        ...closeClients(clients),
      ]);
      logger.info("reflector stopped");
    },
  };
}

export type App = ReturnType<typeof createApp>;
