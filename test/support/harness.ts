import { randomUUID } from "node:crypto";
import { Partitioners, type IHeaders, type Kafka, type Producer } from "kafkajs";
import pg from "pg";
import { inject } from "vitest";
import { createApp, type App, type AppOverrides } from "../../src/composition/app.js";
import { createKafka } from "../../src/adapters/kafka/kafka-client.js";
import { ensureTopics } from "../../src/adapters/kafka/topics.js";
import { pgClientConfig } from "../../src/adapters/postgres/pg-connection.js";
import { createRedisClient } from "../../src/adapters/redis/redis-connection.js";
import { createJsonCodec, createRegistryCodec } from "../../src/adapters/schema-registry/value-codec.js";
import { loadConfig, type Config } from "../../src/config/config.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { createLogger } from "../../src/observability/logger.js";
import { topicNames } from "../../src/config/config.js";
import type { ValueCodec } from "../../src/pipeline/ports.js";
import { waitFor } from "./wait-for.js";

export interface Collected {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  headers: Record<string, string>;
  value: Record<string, unknown> | null;
  raw: Buffer | null;
}

export interface HarnessOptions {
  registry?: boolean;
  env?: Record<string, string>;
  overrides?: AppOverrides;
  startApp?: boolean;
}

/**
 * One isolated Reflector per test file against the real services: random topic names, consumer
 * group, Redis key prefix and tenant, so files never see each other's data.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const id = randomUUID().slice(0, 8);
  const env: Record<string, string> = {
    KAFKA_BROKERS: inject("kafkaBrokers"),
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    REDIS_KEY_PREFIX: `test-${id}`,
    KAFKA_GROUP_ID: `reflector-${id}`,
    KAFKA_CLIENT_ID: `reflector-${id}`,
    TOPIC_TASK_COMPLETED: `${id}.agent.task.completed`,
    TOPIC_REFLECTION_ACCEPTED: `${id}.reflection.accepted`,
    TOPIC_REFLECTION_REJECTED: `${id}.reflection.rejected`,
    TOPIC_LOOP_DECISION: `${id}.loop.decision`,
    TOPIC_DLQ: `${id}.agent.task.completed.dlq`,
    TOPIC_RETRY: `${id}.agent.task.completed.retry`,
    TOPIC_REFLECTION_FEEDBACK: `${id}.reflection.feedback`,
    TOPIC_PARTITIONS: "3",
    HTTP_PORT: "0",
    HTTP_HOST: "127.0.0.1",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    HANDLER_RETRY_BASE_MS: "20",
    // Every answer is held to its documented schema (a mismatch answers 500).
    HTTP_VALIDATE_RESPONSES: "true",
    ...(options.registry ? { SCHEMA_REGISTRY_URL: inject("schemaRegistryUrl") } : {}),
    ...options.env,
  };
  const config: Config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  const kafka: Kafka = createKafka({ connection: config.kafka, clientId: `harness-${id}`, logger });
  await ensureTopics(kafka, {
    names: topicNames(config),
    partitions: config.topics.partitions,
    replicationFactor: 1,
  });
  const codec: ValueCodec = options.registry
    ? createRegistryCodec({ url: inject("schemaRegistryUrl") })
    : createJsonCodec();
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();

  const collected: Collected[] = [];
  const viewer = kafka.consumer({ groupId: `viewer-${id}` });
  await viewer.connect();
  const t = config.topics;
  await viewer.subscribe({
    topics: [t.reflectionAccepted, t.reflectionRejected, t.loopDecision, t.deadLetter],
    fromBeginning: true,
  });
  await viewer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const headers = Object.fromEntries(
        Object.entries(message.headers ?? {}).map(([k, v]) => [
          k,
          Array.isArray(v) ? String(v[0]) : String(v),
        ]),
      );
      const value =
        topic === t.deadLetter || !message.value
          ? null
          : ((await codec.decode(message.value)) as Record<string, unknown>);
      collected.push({
        topic,
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        headers,
        value,
        raw: message.value,
      });
    },
  });

  // Built as the processor builds them, so a harness on TLS stores reads them too.
  const pool = new pg.Pool({
    ...pgClientConfig({ databaseUrl: config.databaseUrl, sslCaFile: config.databaseSslCaFile }),
    max: 3,
  });
  const redis = createRedisClient(config.redis);
  let app: App | null = null;

  const harness = {
    id,
    config,
    kafka,
    codec,
    pool,
    redis,
    collected,
    get app(): App {
      if (!app) throw new Error("app not started");
      return app;
    },
    async startApp(overrides: AppOverrides = options.overrides ?? {}): Promise<App> {
      app = createApp(config, logger, overrides);
      await app.start();
      return app;
    },
    async stopApp(): Promise<void> {
      await app?.stop();
      app = null;
    },
    /** Publishes a task event (encoded with the harness codec) or a raw value; returns its partition/offset. */
    async publish(event: TaskCompleted | string | Buffer, headers?: IHeaders) {
      const value =
        typeof event === "string" || Buffer.isBuffer(event)
          ? event
          : await codec.encode(t.taskCompleted, "task-completed.v1", event);
      const key = typeof event === "object" && !Buffer.isBuffer(event) ? event.loopId : "raw";
      const [meta] = await producer.send({
        topic: t.taskCompleted,
        messages: [{ key, value, ...(headers ? { headers } : {}) }],
      });
      if (!meta) throw new Error("no record metadata");
      return { partition: meta.partition, offset: meta.baseOffset };
    },
    on(topic: string, predicate: (c: Collected) => boolean = () => true): Collected[] {
      return collected.filter((c) => c.topic === topic && predicate(c));
    },
    async waitForOutputs(eventId: string, count: number, timeoutMs = 60_000): Promise<Collected[]> {
      return waitFor(
        () => {
          const found = collected.filter((c) => c.value?.sourceEventId === eventId);
          return found.length >= count ? found : undefined;
        },
        { timeoutMs, what: `${count} outputs for ${eventId}` },
      );
    },
    async close(): Promise<void> {
      await app?.stop();
      await viewer.disconnect();
      await producer.disconnect();
      await pool.end();
      redis.disconnect();
    },
  };
  if (options.startApp !== false) await harness.startApp();
  return harness;
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;
