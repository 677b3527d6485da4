import type { Redis } from "ioredis";
import pg from "pg";
import { createCachedEmbedder } from "../adapters/embedding/cached-embedder.js";
import { createHashingEmbedder } from "../adapters/embedding/hashing-embedder.js";
import { createLocalEmbedder } from "../adapters/embedding/local-embedder.js";
import { modelProfile } from "../domain/embedding/model-profiles.js";
import { createStaticEmbedder } from "../adapters/embedding/static-embedder.js";
import { createKafka, type KafkaClient } from "../adapters/kafka/kafka-client.js";
import { createLogOffsetsReader, type LogOffsetsReader } from "../adapters/kafka/log-offsets.js";
import { createProducer, type KafkaProducer } from "../adapters/kafka/producers.js";
import { ensureTopics } from "../adapters/kafka/topics.js";
import { createLlmAdapters, type LlmAdapterDeps } from "../adapters/llm/llm-adapters.js";
import { migrate, pendingMigrations } from "../adapters/postgres/migrate.js";
import { pgClientConfig } from "../adapters/postgres/pg-connection.js";
import { createPgFeedbackStore } from "../adapters/postgres/pg-feedback-store.js";
import { createPgLessonStore } from "../adapters/postgres/pg-lesson-store.js";
import { createPgLessonSplitStore } from "../adapters/postgres/pg-lesson-split.js";
import { createPgLoopStore } from "../adapters/postgres/pg-loop-store.js";
import {
  createPgExclusiveRunner,
  createPgMaintenanceStore,
} from "../adapters/postgres/pg-maintenance-store.js";
import { createPgReflectionStore } from "../adapters/postgres/pg-reflection-store.js";
import { sharePatternEvidence } from "../adapters/postgres/shared-pattern-evidence.js";
import { createRedisClient } from "../adapters/redis/redis-connection.js";
import { createRedisSignatureEvictor } from "../adapters/redis/redis-signature-evictor.js";
import { createJsonCodec, createRegistryCodec } from "../adapters/schema-registry/value-codec.js";
import { buildQualityConfig } from "./quality-config.js";
import { topicNames, type Config } from "../config/config.js";
import { errorMessage, ReflectorError } from "../domain/errors.js";
import type { LessonSplitStore } from "../domain/memory/lesson-split.js";
import { defaultQualityConfig } from "../domain/quality/quality-config.js";
import { runsPeriodicReflection } from "../domain/select-for-reflection.js";
import type { FeedbackStore } from "../features/feedback/feedback-store.js";
import type { LessonStore } from "../features/lessons/lesson-store.js";
import type { LoopStore } from "../features/loops/loop-store.js";
import { runDream, type DreamOptions, type DreamReport } from "../maintenance/dream.js";
import type { ExclusiveRunner } from "../maintenance/maintenance-ports.js";
import {
  createHeuristicPatternGenerator,
  createLlmPatternGenerator,
} from "../maintenance/pattern-generators.js";
import { runPrune, type PruneOptions, type PruneReport } from "../maintenance/prune.js";
import type { Logger } from "../observability/logger.js";
import type {
  AnswerEvaluator,
  Clock,
  Embedder,
  ReflectionGenerator,
  ReflectionStore,
  ValueCodec,
} from "../pipeline/ports.js";
import type { LessonCheck } from "../pipeline/lesson-check.js";
import { within } from "../domain/within.js";

/**
 * The builders of the composition root: every adapter is built here or in `app.ts`, from config.
 * The processor (`app.ts`) and the CLI commands use the same builders, so a command runs with the
 * clients, stores and generators the processor would have.
 */

export const systemClock: Clock = { now: () => new Date() };

/** `work`, or an error naming `what` once `ms` have passed. */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const late = Symbol("late");
  const result = await within(work, ms, late);
  if (result === late) throw new Error(`${what} did not finish within ${ms} ms`);
  return result;
}

/** Kafka's default `max.message.bytes`, for a topic whose limit could not be read. */
export const defaultMaxMessageBytes = 1_048_588;

export interface PoolOptions {
  max?: number;
  connectionTimeoutMillis?: number;
  idleTimeoutMillis?: number;
  /** Where connection failures go; `warn` for the pipeline's pool, `debug` for a probe's. */
  logger?: Logger;
  logLevel?: "warn" | "debug";
}

/** A Postgres pool whose failing connections, idle or checked out, are logged and never fatal. */
export function buildPostgresPool(config: Config, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    ...pgClientConfig({ databaseUrl: config.databaseUrl, sslCaFile: config.databaseSslCaFile }),
    max: options.max ?? config.databasePoolMax,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
    ...(options.idleTimeoutMillis !== undefined ? { idleTimeoutMillis: options.idleTimeoutMillis } : {}),
  });
  const level = options.logLevel ?? "warn";
  pool.on("error", (err) => {
    options.logger?.[level]({ err }, "idle postgres connection failed");
  });
  // A connection that dies while checked out (Postgres restarted mid-transaction) emits 'error' on
  // its client; unhandled, that kills the process. The query in progress rejects on its own and
  // the consumer treats it as an outage, so logging is all that is left to do here.
  pool.on("connect", (client) => {
    client.on("error", (err) => {
      options.logger?.[level]({ err }, "postgres connection failed");
    });
  });
  return pool;
}

/** A one-connection pool for the readiness probe: probes never queue behind (or take from) the pipeline's. */
export function buildProbePool(config: Config, logger?: Logger): pg.Pool {
  return buildPostgresPool(config, {
    max: 1,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 60_000,
    ...(logger ? { logger } : {}),
    logLevel: "debug",
  });
}

/** Redis, connected on first use; commands fail fast while it is away (callers own the waiting). */
export function buildRedis(config: Config, logger?: Logger): Redis {
  const redis = createRedisClient(config.redis, {
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    enableOfflineQueue: true,
    // Commands issued in the same turn of the event loop (the events of a batch) go in one
    // pipeline: one round trip instead of one each.
    enableAutoPipelining: true,
  });
  redis.on("error", (err) => {
    logger?.debug({ err }, "redis connection error");
  });
  return redis;
}

/** The Kafka client; `role` names a command's client (`<KAFKA_CLIENT_ID>-<role>`). */
export function buildKafka(config: Config, logger: Logger, role?: string): KafkaClient {
  return createKafka({
    connection: config.kafka,
    clientId: role ? `${config.kafka.clientId}-${role}` : config.kafka.clientId,
    logger,
  });
}

/** An idempotent producer keyed like the agents' (src/adapters/kafka/producers.ts), for the CLI. */
export function buildProducer(kafka: KafkaClient): KafkaProducer {
  return createProducer(kafka);
}

export function buildLogOffsets(kafka: KafkaClient): LogOffsetsReader {
  return createLogOffsetsReader(kafka);
}

/** Plain JSON values, or the Confluent wire format when a schema registry is configured. */
export function buildCodec(config: Config): ValueCodec {
  return config.schemaRegistryUrl
    ? createRegistryCodec({ url: config.schemaRegistryUrl, ...config.schemaRegistry })
    : createJsonCodec();
}

/** Creates Reflector's topics; existing ones are left alone. */
export function createTopics(config: Config, kafka: KafkaClient) {
  return ensureTopics(kafka, {
    names: topicNames(config),
    partitions: config.topics.partitions,
    replicationFactor: config.topics.replicationFactor,
  });
}

/** Refuses to run against a database that lacks migrations this build needs (`SCHEMA_BEHIND`). */
export async function assertSchemaCurrent(pool: pg.Pool): Promise<void> {
  const pending = await pendingMigrations(pool);
  if (pending.length > 0) {
    throw new ReflectorError(
      "SCHEMA_BEHIND",
      `the database lacks ${String(pending.length)} migration(s) this build needs (${pending.join(", ")}); run \`npx reflector migrate\` first`,
    );
  }
}

/** Creates the database if needed and applies pending migrations (or rolls `down` back). */
export function migrateDatabase(config: Config, options: { down?: number } = {}): Promise<string[]> {
  return migrate({
    databaseUrl: config.databaseUrl,
    sslCaFile: config.databaseSslCaFile,
    direction: options.down ? "down" : "up",
    ...(options.down ? { count: options.down } : {}),
  });
}

export interface Llm {
  generator: ReflectionGenerator;
  embedder: Embedder;
  answerEvaluator: AnswerEvaluator;
  /** The lessons-for-task check by the model (`LESSONS_FOR_TASK_CHECK=model`); null: meaning alone. */
  lessonCheck: LessonCheck | null;
  /** The model judge (`REFLECTOR_JUDGE=model`); null: the offline reading judges alone. */
  causeJudge: ReturnType<typeof createLlmAdapters>["causeJudge"];
  /** The endpoint's concurrency slots, for the metrics. */
  slots: ReturnType<typeof createLlmAdapters>["slots"];
}

/**
 * The generator, answer evaluator and embedder the config names; the offline ones are the defaults
 * (the heuristic generator and the static token vectors distilled from the local embedding model).
 * Throws when the local model or its distilled table is missing.
 */
export function buildLlm(config: Config, deps: LlmAdapterDeps = {}): Llm {
  const { generator, answerEvaluator, openAiEmbedder, lessonCheck, causeJudge, slots } = createLlmAdapters(
    config,
    deps,
  );
  // A model's vectors are worth remembering (recurring failures embed the same trace text), and
  // so are the static ones (a lookup costs less than tokenising the text again); feature hashing
  // is cheaper than the lookup.
  const embedder = openAiEmbedder
    ? createCachedEmbedder(openAiEmbedder)
    : config.embeddings === "local"
      ? createCachedEmbedder(
          createLocalEmbedder({
            modelDir: config.embeddingModelDir,
            profile: modelProfile(config.localEmbeddingModel),
          }),
        )
      : config.embeddings === "static"
        ? createCachedEmbedder(createStaticEmbedder({ modelDir: config.embeddingModelDir }))
        : createHashingEmbedder();
  return { generator, answerEvaluator, embedder, lessonCheck, causeJudge, slots };
}

/**
 * The store of reflections; vectors are stored under the embedder's name. Concurrent reads of one
 * pattern's evidence are shared (see sharePatternEvidence).
 */
export function buildReflectionStore(pool: pg.Pool, embedder: Pick<Embedder, "name">) {
  return sharePatternEvidence(
    createPgReflectionStore(pool, {
      embeddingModel: embedder.name,
      patternValidity: defaultQualityConfig.patternValidity,
    }),
  );
}

/**
 * Splitting a merged lesson (`reflector split`, `POST /api/v1/reflections/{id}/split`): the
 * Postgres write, then the cached signatures that moved are forgotten, so the next recurrence
 * under them reads where they now point.
 */
export function buildLessonSplits(pool: pg.Pool, config: Config, redis?: Redis): LessonSplitStore {
  const store = createPgLessonSplitStore(pool);
  const evictor = redis ? createRedisSignatureEvictor(redis, { keyPrefix: config.redis.keyPrefix }) : null;
  return {
    async splitSources(request) {
      const result = await store.splitSources(request);
      if (result.status === "split" && evictor && result.signaturesMoved.length) {
        const moved = result.signaturesMoved.map((signature) => ({ tenantId: request.tenantId, signature }));
        // Redis away: named as the outage it is (the split itself is already committed).
        await evictor.forget(moved).catch((err: unknown) => {
          throw new ReflectorError("INDEX_UNAVAILABLE", `redis: ${errorMessage(err)}`, { cause: err });
        });
      }
      return result;
    },
    listSplits: (tenantId, query) => store.listSplits(tenantId, query),
  };
}

/** The read side's stores (loops, lessons, feedback), each behind its feature's port. */
export function buildReadStores(
  pool: pg.Pool,
  clock: Clock,
): { loops: LoopStore; lessons: LessonStore; feedback: FeedbackStore } {
  return {
    loops: createPgLoopStore(pool, { clock }),
    lessons: createPgLessonStore(pool, { clock }),
    feedback: createPgFeedbackStore(pool),
  };
}

export interface Maintenance {
  exclusive: ExclusiveRunner;
  generatorName: string;
  dream(options: DreamOptions): Promise<DreamReport>;
  prune(options: PruneOptions): Promise<PruneReport>;
}

export interface MaintenanceDeps {
  pool: pg.Pool;
  redis: Redis;
  generator: ReflectionGenerator;
  embedder: Embedder;
  clock: Clock;
  /** The reflections store to reuse; one over `pool` is built when absent. */
  reflections?: ReflectionStore;
}

/**
 * Dreaming and pruning built from config, for the processor's schedule and the CLI. The pattern
 * generator follows the reflection generator: a model when one is configured, otherwise the
 * offline synthesis, and the stored rows say which.
 */
export function buildMaintenance(config: Config, deps: MaintenanceDeps): Maintenance {
  const store = createPgMaintenanceStore(
    deps.pool,
    deps.reflections ?? buildReflectionStore(deps.pool, deps.embedder),
    deps.embedder.name,
  );
  const generator =
    deps.generator.name === "heuristic"
      ? createHeuristicPatternGenerator()
      : createLlmPatternGenerator(deps.generator);
  const quality = buildQualityConfig(config);
  const evictor = createRedisSignatureEvictor(deps.redis, { keyPrefix: config.redis.keyPrefix });
  return {
    exclusive: createPgExclusiveRunner(deps.pool),
    generatorName: generator.name,
    dream: (options) => {
      // Lite mode never reflects on its own initiative.
      if (!runsPeriodicReflection(config.mode)) {
        return Promise.reject(
          new Error(
            config.mode === "off"
              ? "dreaming is off with reflective memory (REFLECTIVE_MEMORY_ENABLED=false)"
              : "dreaming runs in full mode only (REFLECTOR_MODE=lite)",
          ),
        );
      }
      return runDream({ store, generator, embedder: deps.embedder, quality, clock: deps.clock }, options);
    },
    prune: (options) => runPrune({ store, evictor, clock: deps.clock }, options),
  };
}

/** The input topics bound to tenants that exist on the cluster (for `lag` and `dlq replay`). */
export { boundTopics } from "../adapters/kafka/tenant-topics.js";

/** The operator's Kafka tools (`reflector lag`, `reflector dlq replay`), beside the Kafka adapter. */
export { formatLagTable, readConsumerLag } from "../adapters/kafka/admin/consumer-lag.js";
export { replayDeadLetters, type ReplaySummary } from "../adapters/kafka/admin/dlq-replay.js";
