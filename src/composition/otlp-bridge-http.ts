import type { Registry } from "prom-client";
import type { KafkaClient } from "../adapters/kafka/kafka-client.js";
import { createKafkaHealthCheck } from "../adapters/kafka/kafka-health.js";
import type { buildPostgresPool, buildRedis } from "./builders.js";
import { createHttpServer } from "../http/http-server.js";
import type { Logger } from "../observability/logger.js";

type KafkaConsumer = ReturnType<KafkaClient["consumer"]>;

/**
 * The bridge's consumer group membership, from its consumer's group events: joined once it has
 * its partitions, out while the group rebalances, after it stopped, and for good once it crashed.
 * `kafka` is the client to build the bridge's consumer from: the same client, whose consumers
 * report here.
 */
export function watchBridgeGroup(client: KafkaClient, onChange: (joined: boolean) => void = () => undefined) {
  let joined = false;
  let crashed = false;
  const set = (value: boolean) => {
    joined = value && !crashed;
    onChange(joined);
  };
  const watch = (consumer: KafkaConsumer): KafkaConsumer => {
    const { events } = consumer;
    consumer.on(events.GROUP_JOIN, () => {
      set(true);
    });
    for (const out of [events.REBALANCING, events.STOP, events.DISCONNECT]) {
      consumer.on(out, () => {
        set(false);
      });
    }
    consumer.on(events.CRASH, () => {
      crashed = true;
      set(false);
    });
    return consumer;
  };
  const kafka = new Proxy(client, {
    get(target, property) {
      if (property === "consumer") {
        return (config: Parameters<KafkaClient["consumer"]>[0]) => watch(target.consumer(config));
      }
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the client itself: its methods use private fields a proxy does not carry.
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { kafka, isJoined: () => joined };
}

export interface OtlpBridgeHttpDeps {
  kafka: KafkaClient;
  /** A one-connection pool of its own, so probes never queue behind the span store's. */
  probePool: ReturnType<typeof buildPostgresPool>;
  redis: ReturnType<typeof buildRedis>;
  registry: Registry;
  logger: Logger;
  /** In its group, with its partitions, and not crashed. */
  isConsuming: () => boolean;
  /** The task-event producer is connected (between the bridge's start and its stop). */
  isPublisherConnected: () => boolean;
  isStopping: () => boolean;
}

/**
 * The standalone bridge's operational HTTP (`reflector otlp-bridge`, on HTTP_HOST:HTTP_PORT):
 * `/healthz` while the process runs; `/readyz` 200 only while its consumer is in its group, its
 * task-event producer is connected and a broker answers, and Postgres (where spans wait for their
 * trace) and Redis (where new traces are counted) answer; `/metrics` in Prometheus' format. No
 * API and no OTLP/HTTP: those are the processor's.
 */
export function buildOtlpBridgeHttp(deps: OtlpBridgeHttpDeps) {
  const kafkaHealth = createKafkaHealthCheck({
    admin: deps.kafka.admin({ retry: { retries: 0 } }),
    isProducerConnected: deps.isPublisherConnected,
    timeoutMs: 2_000,
  });
  const http = createHttpServer({
    logger: deps.logger,
    registry: deps.registry,
    isConsuming: deps.isConsuming,
    isStopping: deps.isStopping,
    dependencies: [
      { name: "kafka", check: () => kafkaHealth.check() },
      { name: "postgres", check: async () => (await deps.probePool.query("SELECT 1")).rowCount === 1 },
      {
        name: "redis",
        check: async () => {
          await deps.redis.ping();
          return true;
        },
      },
    ],
  });
  return {
    http,
    async close(): Promise<void> {
      await Promise.allSettled([http.close(), kafkaHealth.close(), deps.probePool.end()]);
    },
  };
}
