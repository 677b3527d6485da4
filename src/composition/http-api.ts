import type { Registry } from "prom-client";
import type { KafkaClient } from "../adapters/kafka/kafka-client.js";
import { createKafkaHealthCheck } from "../adapters/kafka/kafka-health.js";
import { createProducer } from "../adapters/kafka/producers.js";
import type { SizeLimits } from "../adapters/kafka/record-size.js";
import { createPgLessonStore } from "../adapters/postgres/pg-lesson-store.js";
import { createPgStrategyStore } from "../adapters/postgres/pg-strategy-store.js";
import {
  buildLessonSplits,
  type buildPostgresPool,
  type buildRedis,
  type buildReadStores,
} from "./builders.js";
import type { Config } from "../config/config.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { createLessonIndex } from "../features/lessons/lessons-for-task-index.js";
import { createPgLessonRetrievals } from "../adapters/postgres/pg-lesson-retrievals.js";
import { createLessonsForTask } from "../features/lessons/lessons-for-task.js";
import { createApiKeyring } from "../http/api-keys.js";
import { createHttpServer } from "../http/http-server.js";
import type { createFeedbackMetrics } from "../observability/feedback-metrics.js";
import { countLessonsForTask } from "../observability/lessons-for-task-metrics.js";
import { countCommittedOutputs, type Metrics } from "../observability/metrics.js";
import { registerLessonIndexGauges } from "../observability/lessons-index-metrics.js";
import type { Logger } from "../observability/logger.js";
import { buildOtlpHttpIngest } from "./otlp-bridge-app.js";
import { createLoopCompleter } from "../pipeline/complete-loop.js";
import { createRunReflector } from "../pipeline/reflect-run.js";
import type { TaskProcessor } from "../pipeline/task-processor.js";
import type { LessonCheck } from "../pipeline/lesson-check.js";
import type { Clock, Embedder, OutboundMessage, ReflectionStore, ValueCodec } from "../pipeline/ports.js";
import { buildOutputPublisher } from "./task-consumer.js";

export interface HttpApiDeps {
  kafka: KafkaClient;
  pool: ReturnType<typeof buildPostgresPool>;
  /** Its own one-connection pool: probes never queue behind (or take from) the pipeline's. */
  probePool: ReturnType<typeof buildPostgresPool>;
  redis: ReturnType<typeof buildRedis>;
  codec: ValueCodec;
  limits: SizeLimits;
  registry: Registry;
  /** The processor's outcome counters: a run reflected over HTTP counts in them as a consumed one does. */
  metrics?: Pick<Metrics, "verdicts" | "decisions" | "generatorCalls">;
  logger: Logger;
  reflectionStore: ReflectionStore;
  readStores: ReturnType<typeof buildReadStores>;
  feedbackMetrics: Pick<ReturnType<typeof createFeedbackMetrics>, "recorded">;
  guardrails: GuardrailConfig;
  embedder: Embedder;
  /** The model's lesson check (`LESSONS_FOR_TASK_CHECK=model`); null: meaning alone chooses. */
  lessonCheck?: LessonCheck | null;
  clock: Clock;
  /** The pipeline the consumer runs, run by `POST /api/v1/reflect` too. */
  processor: Pick<TaskProcessor, "process">;
  /** The transactional producer carries outputs and offsets: without it nothing can commit. */
  isProducerConnected: () => boolean;
  isConsuming: () => boolean;
  isStopping: () => boolean;
  /**
   * The OTLP bridge when it runs in this process: `/readyz` then also says whether its consumer is
   * in its group and its publisher connected (`otlp_bridge`), as the standalone bridge's own does.
   */
  otlpBridge?: { isConsuming: () => boolean; isPublisherConnected: () => boolean } | null;
}

function countedIn(metrics: NonNullable<HttpApiDeps["metrics"]>) {
  return (outputs: readonly OutboundMessage[], generatorCalls: number) => {
    countCommittedOutputs(metrics, outputs, generatorCalls);
  };
}

/** Ready while the in-process OTLP bridge consumes and can publish what it assembles. */
function otlpBridgeCheck(bridge: NonNullable<HttpApiDeps["otlpBridge"]>) {
  return {
    name: "otlp_bridge",
    check: () => Promise.resolve(bridge.isConsuming() && bridge.isPublisherConnected()),
  };
}

/**
 * The lessons held in memory for lessons for a task, bounded by `LESSONS_INDEX_MAX_BYTES`, with
 * their gauges and a warning when one tenant alone is over half of it (docs/api.md).
 */
function buildLessonIndex(config: Config, deps: HttpApiDeps) {
  const maxBytes = config.lessonsIndexMaxBytes;
  const index = createLessonIndex({
    source: createPgLessonStore(deps.pool, { clock: deps.clock }),
    embeddingModel: deps.embedder.name,
    clock: deps.clock,
    maxBytes,
    coarse: config.lessonsIndexCoarse,
    onNotHeld: ({ tenantId, held, notHeld, bytes }) => {
      deps.logger.warn(
        { tenantId, held, notHeld, bytes, maxBytes },
        "lessons for a task: the tenant's lessons are over half of LESSONS_INDEX_MAX_BYTES; its least valuable are not held and not served",
      );
    },
  });
  registerLessonIndexGauges(index, deps.registry);
  return index;
}

/**
 * The HTTP server (API, OTLP over HTTP when the bridge runs, metrics, health) with the producers
 * and the checks it needs; `connect` before listening, `close` after.
 */
export function buildHttpApi(config: Config, deps: HttpApiDeps) {
  const { kafka, clock, redis } = deps;
  const kafkaHealth = createKafkaHealthCheck({
    admin: kafka.admin({ retry: { retries: 0 } }),
    isProducerConnected: deps.isProducerConnected,
    timeoutMs: 2_000,
  });
  // A decision made over HTTP consumes no offset, so it needs no transaction: a plain idempotent
  // producer publishes it on loop.decision like the Kafka path's decisions.
  const apiProducer = createProducer(kafka);
  const apiPublisher = buildOutputPublisher(config, apiProducer, deps.codec);
  // OTLP over HTTP (POST /v1/traces) onto the topic the OTLP bridge reads, when the bridge runs.
  const otlpHttp = config.otlp.topic
    ? buildOtlpHttpIngest(config, config.otlp.topic, {
        kafka,
        limits: deps.limits,
        registry: deps.registry,
        redis,
      })
    : null;
  const lessonIndex = buildLessonIndex(config, deps);
  const http = createHttpServer({
    logger: deps.logger,
    api: {
      keys: createApiKeyring(config.http.apiKeys),
      stores: {
        ...deps.readStores,
        lessonSplits: buildLessonSplits(deps.pool, config, redis),
        strategies: createPgStrategyStore(deps.pool),
      },
      guardrails: deps.guardrails,
      completeLoop: createLoopCompleter({
        store: deps.reflectionStore,
        guardrails: deps.guardrails,
        clock,
        publish: (outputs) => apiPublisher.publish(outputs, undefined),
      }),
      commonIssues: (tenantId) => deps.reflectionStore.commonIssues(tenantId),
      lessonsForTask: countLessonsForTask(
        createLessonsForTask({
          index: lessonIndex,
          embedder: deps.embedder,
          clock,
          minOccurrences: config.lessonServeMinOccurrences,
          ...(deps.lessonCheck
            ? { check: deps.lessonCheck, checkCandidates: config.lessonCheckCandidates }
            : {}),
          // The lessons served to a loop, read back when its completion arrives.
          retrievals: createPgLessonRetrievals(deps.pool),
        }),
        deps.registry,
      ),
      clock,
      onFeedback: deps.feedbackMetrics.recorded,
      logger: deps.logger,
      allowCleartextKeys: config.http.allowCleartextApiKeys,
      lessonsForTaskPerMinute: config.http.lessonsForTaskPerMinute,
      ...(config.http.auditHmacKey ? { auditKey: config.http.auditHmacKey } : {}),
      ...(otlpHttp ? { otlp: otlpHttp.ingest } : {}),
      reflect: {
        // The consumer's processor; its outputs go out on the API's producer, as a decision does.
        reflector: createRunReflector({
          processor: deps.processor,
          publish: (outputs) => apiPublisher.publish(outputs, undefined),
          ...(deps.metrics ? { counted: countedIn(deps.metrics) } : {}),
        }),
        findProcessed: (tenantId, eventId) => deps.reflectionStore.findProcessed(tenantId, eventId),
        mapping: {
          tenantAttribute: config.otlp.tenantAttribute,
          projectAttribute: config.otlp.projectAttribute,
          defaultTenant: config.otlp.defaultTenant,
          defaultProject: config.otlp.defaultProject,
        },
        ...config.http.reflect,
        logger: deps.logger,
      },
    },
    validateResponses: config.http.validateResponses,
    registry: deps.registry,
    trustedProxies: config.http.trustedProxies,
    isConsuming: deps.isConsuming,
    isStopping: deps.isStopping,
    dependencies: [
      ...(deps.otlpBridge ? [otlpBridgeCheck(deps.otlpBridge)] : []),
      { name: "kafka", check: () => kafkaHealth.check() },
      { name: "postgres", check: async () => (await deps.probePool.query("SELECT 1")).rowCount === 1 },
      {
        name: "redis",
        check: async () => {
          await redis.ping();
          return true;
        },
      },
      // Without the registry, wire-format inputs cannot be decoded nor outputs encoded.
      ...(deps.codec.check ? [{ name: "schema-registry", check: deps.codec.check }] : []),
    ],
  });

  return {
    http,
    async connect(): Promise<void> {
      await apiProducer.connect();
      await otlpHttp?.connect();
    },
    /** Closes the producers and the health check's admin; the server itself is `http.close()`. */
    closeClients(): Promise<unknown>[] {
      return [kafkaHealth.close(), apiProducer.disconnect(), otlpHttp?.disconnect() ?? Promise.resolve()];
    },
  };
}
