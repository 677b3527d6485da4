import { Counter, type Registry } from "prom-client";
import { createBridgePublisher } from "./adapters/kafka/bridge-publisher.js";
import type { KafkaClient } from "./adapters/kafka/kafka-client.js";
import { createOtlpConsumer } from "./adapters/kafka/otlp-consumer.js";
import { createRequestProducer } from "./adapters/kafka/producers.js";
import { batchOverheadBytes, readTopicLimits, type SizeLimits } from "./adapters/kafka/record-size.js";
import { createOtlpDecoder } from "./adapters/otlp/otlp-decoder.js";
import { createOtlpTenantStamper } from "./adapters/otlp/otlp-tenant-stamp.js";
import { createPgOtlpSpanStore } from "./adapters/postgres/pg-otlp-span-store.js";
import {
  assertSchemaCurrent,
  buildCodec,
  buildKafka,
  buildPostgresPool,
  defaultMaxMessageBytes,
  systemClock,
  withDeadline,
} from "./builders.js";
import type { Config } from "./config/config.js";
import { ReflectorError } from "./domain/errors.js";
import type { OtlpHttpIngest } from "./http/otlp-route.js";
import type { Logger } from "./observability/logger.js";
import { createMetrics } from "./observability/metrics.js";
import { createOtlpMetrics } from "./observability/otlp-metrics.js";
import { createOtlpBridge } from "./pipeline/otlp-bridge.js";
import type { Clock, ValueCodec } from "./pipeline/ports.js";

/**
 * The OTLP ingest bridge's part of the composition root: built beside the processor by `app.ts`
 * when OTLP_TOPIC is set, or alone by `reflector otlp-bridge`.
 */

/**
 * The bytes an event's JSON may take on `topic`: the record limit less the batch and request
 * framing, the key (a loop id, 200 characters at most), the headers and the registry's prefix.
 */
function eventRoom(limits: SizeLimits, topic: string): number {
  return Math.min(limits.topicBytes(topic), limits.requestBytes) - batchOverheadBytes - 512 - 2_048;
}

/** What the OTLP bridge shares with the processor when both run in one process. */
interface OtlpBridgeDeps {
  kafka: KafkaClient;
  pool: ReturnType<typeof buildPostgresPool>;
  codec: ValueCodec;
  limits: SizeLimits;
  logger: Logger;
  registry: Registry;
  clock: Clock;
}

/**
 * The OTLP ingest bridge (docs/otlp-ingest.md): its own consumer group on `topic`, spans kept in
 * Postgres until each trace is complete, one task event per trace on the input topic.
 */
export function buildOtlpBridge(config: Config, topic: string, deps: OtlpBridgeDeps) {
  const o = config.otlp;
  const otlpMetrics = createOtlpMetrics(deps.registry, deps.logger);
  const publisher = createBridgePublisher({
    kafka: deps.kafka,
    topic: o.taskTopic,
    limits: deps.limits,
    deadLetterTopic: config.topics.deadLetter,
    sourceTopic: topic,
    groupId: o.groupId,
    encode: (event) => deps.codec.encode(o.taskTopic, "task-completed.v1", event),
  });
  const bridge = createOtlpBridge({
    store: createPgOtlpSpanStore(deps.pool),
    publisher,
    clock: deps.clock,
    mapping: {
      tenantAttribute: o.tenantAttribute,
      projectAttribute: o.projectAttribute,
      defaultTenant: o.defaultTenant,
      defaultProject: o.defaultProject,
    },
    settings: {
      graceMs: o.graceMs,
      timeoutMs: o.timeoutMs,
      sweepIntervalMs: o.sweepIntervalMs,
      caps: { maxSpans: o.maxSpansPerTrace, maxBytes: o.maxTraceBytes },
      boundTenant: o.boundTenant,
      maxEventBytes: () => eventRoom(deps.limits, o.taskTopic),
    },
    observer: otlpMetrics.observer,
    onSweepError: (err) => {
      deps.logger.warn({ err }, "otlp bridge sweep failed; the next one tries again");
    },
  });
  // A resource that names its tenant (or project) twice is refused, not read one way or the other.
  const decoder = createOtlpDecoder({ uniqueResourceKeys: [o.tenantAttribute, o.projectAttribute] });
  const crashListeners: ((error: Error) => void)[] = [];
  const consumer = createOtlpConsumer({
    kafka: deps.kafka,
    groupId: o.groupId,
    topic,
    deadLetterTopic: config.topics.deadLetter,
    limits: deps.limits,
    fromBeginning: config.kafka.fromBeginning,
    sessionTimeoutMs: config.consumer.sessionTimeoutMs,
    decode: (value) => decoder.decode(value),
    ingest: (spans) => bridge.ingest(spans),
    logger: deps.logger,
    retryBaseMs: config.handler.retryBaseMs,
    observe: { record: otlpMetrics.record },
    onCrash: (error) => {
      for (const listener of crashListeners) listener(error);
    },
  });
  return {
    bridge,
    async start(): Promise<void> {
      await publisher.connect();
      await consumer.start();
      bridge.start();
      deps.logger.info({ topic, groupId: o.groupId }, "otlp bridge started");
    },
    onCrash(listener: (error: Error) => void): void {
      crashListeners.push(listener);
    },
    async stop(): Promise<void> {
      await consumer.stop();
      await bridge.stop();
      await publisher.disconnect();
    },
  };
}

/** `npx reflector otlp-bridge`: the bridge alone, with its own clients (no processor, no HTTP). */
export function createOtlpBridgeApp(config: Config, logger: Logger) {
  const topic = config.otlp.topic;
  if (topic === undefined) {
    throw new ReflectorError("INTERNAL", "OTLP_TOPIC is not set: the bridge has no topic to read");
  }
  // Up to six partitions storing spans and four transactions closing traces at once.
  const pool = buildPostgresPool(config, { max: 12, logger });
  const kafka = buildKafka(config, logger);
  const codec = buildCodec(config);
  const metrics = createMetrics();
  // Read at start: the topics' own max.message.bytes, so events are budgeted against what they take.
  let topicBytes: (topic: string) => number = () => defaultMaxMessageBytes;
  const otlp = buildOtlpBridge(config, topic, {
    kafka,
    pool,
    codec,
    limits: { topicBytes: (name) => topicBytes(name), requestBytes: config.consumer.maxRequestBytes },
    logger,
    registry: metrics.registry,
    clock: systemClock,
  });
  return {
    metrics,
    bridge: otlp.bridge,
    async start(): Promise<void> {
      await assertSchemaCurrent(pool);
      const admin = kafka.admin();
      try {
        await admin.connect();
        topicBytes = await readTopicLimits(
          admin,
          [config.otlp.taskTopic, config.topics.deadLetter],
          defaultMaxMessageBytes,
        );
      } finally {
        await admin.disconnect();
      }
      await otlp.start();
    },
    onCrash: (listener: (error: Error) => void) => {
      otlp.onCrash(listener);
    },
    async stop(): Promise<void> {
      await withDeadline(otlp.stop(), config.shutdownDeadlineMs, "stopping the otlp bridge").catch(
        (err: unknown) => {
          logger.error({ err }, "otlp bridge did not stop cleanly");
        },
      );
      await pool.end();
      logger.info("otlp bridge stopped");
    },
  };
}

/** The largest OTLP/HTTP request body taken, after gzip is undone; larger ones are answered 413. */
export const otlpHttpMaxBodyBytes = 16 * 1024 * 1024;

/**
 * OTLP over HTTP (`POST /v1/traces`): each request validated, its resources stamped with the API
 * key's tenant, and produced to the OTLP topic the bridge consumes, answered only once the brokers
 * acknowledged it (acks from every in-sync replica). The bridge then treats it as any record of the
 * topic: nothing accepted is lost if a bridge restarts, and there is one path into task events.
 */
export function buildOtlpHttpIngest(
  config: Config,
  topic: string,
  deps: { kafka: KafkaClient; limits: SizeLimits; registry: Registry },
) {
  const o = config.otlp;
  const stamper = createOtlpTenantStamper({
    tenantAttribute: o.tenantAttribute,
    projectAttribute: o.projectAttribute,
  });
  // Not idempotent: a retried send may store a record twice, and the bridge stores a span once.
  // A few quick retries only: past them the exporter is answered 503 and retries itself.
  const producer = createRequestProducer(deps.kafka);
  const spans = new Counter({
    name: "reflector_otlp_http_spans_total",
    help: "Spans received over OTLP/HTTP, by result (accepted: acknowledged by Kafka; refused: a 4xx request's)",
    labelNames: ["result"] as const,
    registers: [deps.registry],
  });
  const recordBudget = () =>
    Math.min(deps.limits.topicBytes(topic), deps.limits.requestBytes) - batchOverheadBytes - 1_024;
  const ingest: OtlpHttpIngest = {
    maxBodyBytes: otlpHttpMaxBodyBytes,
    observe: (result, count) => {
      spans.inc({ result }, count);
    },
    async accept(tenantId, body, encoding) {
      if (o.boundTenant !== undefined && o.boundTenant !== tenantId) {
        return {
          ok: false,
          status: 403,
          message: `this Reflector's OTLP bridge publishes for tenant ${JSON.stringify(o.boundTenant)} only (TENANT_TOPIC_BINDING)`,
        };
      }
      const stamped = stamper.stamp(body, encoding, tenantId, recordBudget());
      if (!stamped.ok) {
        return "otherTenant" in stamped
          ? {
              ok: false,
              status: 403,
              message: `a resource names tenant ${JSON.stringify(stamped.otherTenant)} (${o.tenantAttribute}); this API key's tenant is ${JSON.stringify(tenantId)}`,
            }
          : {
              ok: false,
              status: 413,
              message: `one span takes ${String(stamped.spanBytes)} bytes, over the ${String(recordBudget())} a record of ${topic} may hold`,
            };
      }
      if (stamped.values.length === 0) return { ok: true, spans: 0 };
      // Keyed by trace: a tenant's requests spread over the partitions, as the Collector's
      // Kafka exporter spreads them with partition_traces_by_id.
      const key = stamped.firstTraceId ?? tenantId;
      try {
        await producer.send({ topic, acks: -1, messages: stamped.values.map((value) => ({ key, value })) });
      } catch (err) {
        throw new ReflectorError("PUBLISH_FAILED", `kafka produce to ${topic}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      return { ok: true, spans: stamped.spans };
    },
  };
  return {
    ingest,
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
  };
}
