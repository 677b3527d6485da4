import { Counter, type Registry } from "prom-client";
import { createBridgePublisher } from "../adapters/kafka/bridge-publisher.js";
import type { KafkaClient } from "../adapters/kafka/kafka-client.js";
import { createOtlpConsumer } from "../adapters/kafka/otlp-consumer.js";
import { createRequestProducer } from "../adapters/kafka/producers.js";
import { batchOverheadBytes, readTopicLimits, type SizeLimits } from "../adapters/kafka/record-size.js";
import { createOtlpDecoder } from "../adapters/otlp/otlp-decoder.js";
import { createOtlpStampPool } from "../adapters/otlp/otlp-stamp-pool.js";
import { createOtlpTenantStamper, type StampedRequest } from "../adapters/otlp/otlp-tenant-stamp.js";
import { createPgOtlpSpanStore } from "../adapters/postgres/pg-otlp-span-store.js";
import {
  assertSchemaCurrent,
  buildCodec,
  buildKafka,
  buildPostgresPool,
  buildProbePool,
  buildRedis,
  defaultMaxMessageBytes,
  systemClock,
  withDeadline,
} from "./builders.js";
import { otlpTenantLimits, type OtlpTenantLimits } from "../adapters/redis/tenant-volume-limit.js";
import type { Config } from "../config/config.js";
import { ReflectorError } from "../domain/errors.js";
import type { OtlpBodyEncoding, OtlpHttpIngest } from "../http/otlp-route.js";
import type { Logger } from "../observability/logger.js";
import { createMetrics } from "../observability/metrics.js";
import { createOtlpMetrics } from "../observability/otlp-metrics.js";
import { createOtlpBridge } from "../pipeline/otlp-bridge.js";
import { buildOtlpBridgeHttp, watchBridgeGroup } from "./otlp-bridge-http.js";
import type { Clock, ValueCodec } from "../pipeline/ports.js";

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
  /** Where the tenants' new traces are counted (with OTLP/HTTP's); absent: a client of its own. */
  redis?: ReturnType<typeof buildRedis>;
  /** Told each time the bridge's consumer joins its group (true) or leaves it (false). */
  onGroupChange?: (joined: boolean) => void;
}

/**
 * The OTLP ingest bridge (docs/otlp-ingest.md): its own consumer group on `topic`, spans kept in
 * Postgres until each trace is complete, one task event per trace on the input topic.
 */
export function buildOtlpBridge(config: Config, topic: string, deps: OtlpBridgeDeps) {
  const o = config.otlp;
  const otlpMetrics = createOtlpMetrics(deps.registry, deps.logger);
  const redis = deps.redis ?? buildRedis(config, deps.logger);
  const ownRedis = deps.redis ? null : redis;
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
    newTraces: otlpTenantLimits(config, redis).newTraces,
    onSweepError: (err) => {
      deps.logger.warn({ err }, "otlp bridge sweep failed; the next one tries again");
    },
  });
  // A resource that names its tenant (or project) twice is refused, not read one way or the other.
  const decoder = createOtlpDecoder({ uniqueResourceKeys: [o.tenantAttribute, o.projectAttribute] });
  const crashListeners: ((error: Error) => void)[] = [];
  // Its consumer's group events tell readiness (and the ready gauge) whether it has partitions.
  const group = watchBridgeGroup(deps.kafka, deps.onGroupChange);
  let publisherConnected = false;
  const consumer = createOtlpConsumer({
    kafka: group.kafka,
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
    redis,
    isConsuming: group.isJoined,
    isPublisherConnected: () => publisherConnected,
    async start(): Promise<void> {
      await publisher.connect();
      publisherConnected = true;
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
      publisherConnected = false;
      await publisher.disconnect();
      ownRedis?.disconnect();
    },
  };
}

/**
 * `npx reflector otlp-bridge`: the bridge alone, with its own clients (no processor), and its
 * health and metrics on HTTP_HOST:HTTP_PORT (otlp-bridge-http.ts).
 */
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
  let stopping = false;
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
    onGroupChange: (joined) => {
      metrics.ready.set(joined ? 1 : 0);
    },
  });
  const operational = buildOtlpBridgeHttp({
    kafka,
    probePool: buildProbePool(config, logger),
    redis: otlp.redis,
    registry: metrics.registry,
    logger,
    isConsuming: otlp.isConsuming,
    isPublisherConnected: otlp.isPublisherConnected,
    isStopping: () => stopping,
  });
  return {
    metrics,
    bridge: otlp.bridge,
    http: operational.http,
    async start(): Promise<void> {
      // First: liveness answers while the rest starts, and readiness says what is missing.
      await operational.http.listen({ host: config.http.host, port: config.http.port });
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
      stopping = true;
      metrics.ready.set(0);
      await withDeadline(otlp.stop(), config.shutdownDeadlineMs, "stopping the otlp bridge").catch(
        (err: unknown) => {
          logger.error({ err }, "otlp bridge did not stop cleanly");
        },
      );
      await operational.close();
      await pool.end();
      logger.info("otlp bridge stopped");
    },
  };
}

/** What an OTLP/HTTP ingest needs besides its settings: where requests are stamped and sent. */
export interface OtlpHttpIngestDeps {
  otlp: Pick<Config["otlp"], "boundTenant" | "tenantAttribute" | "http" | "newTracesPerMinute" | "timeoutMs">;
  topic: string;
  /** `OtlpTenantStamper.stamp`, on a worker thread or on the event loop. */
  stamp(
    body: Buffer,
    encoding: OtlpBodyEncoding,
    tenantId: string,
    maxRecordBytes: number,
    maxSpans: number,
  ): StampedRequest | Promise<StampedRequest>;
  /** Produces the stamped records; resolves once the brokers acknowledged them. */
  send(key: string, values: Buffer[]): Promise<void>;
  /** The largest record the topic takes. */
  recordBudget(): number;
  observe?: OtlpHttpIngest["observe"];
  /**
   * The tenant's spans and new trace ids a minute (OTLP_HTTP_SPANS_PER_MINUTE,
   * OTLP_NEW_TRACES_PER_MINUTE); absent: counted in this process only.
   */
  limits?: OtlpTenantLimits;
  now?: () => number;
}

/**
 * OTLP over HTTP's bounds and path to the topic: the bound tenant, the request's spans within
 * `OTLP_HTTP_MAX_SPANS` and the tenant's within `OTLP_HTTP_SPANS_PER_MINUTE` (checked before
 * anything is produced), every resource stamped with the key's tenant.
 */
export function createOtlpHttpIngest(deps: OtlpHttpIngestDeps): OtlpHttpIngest {
  const o = deps.otlp;
  const limits = deps.limits ?? otlpTenantLimits({ otlp: o, redis: { keyPrefix: "" } }, undefined, deps.now);
  return {
    maxBodyBytes: o.http.maxBodyBytes,
    requestsPerMinute: o.http.requestsPerMinute,
    ...(deps.observe ? { observe: deps.observe } : {}),
    async accept(tenantId, body, encoding) {
      if (o.boundTenant !== undefined && o.boundTenant !== tenantId) {
        return {
          ok: false,
          status: 403,
          message: `this Reflector's OTLP bridge publishes for tenant ${JSON.stringify(o.boundTenant)} only (TENANT_TOPIC_BINDING)`,
        };
      }
      const budget = deps.recordBudget();
      const stamped = await deps.stamp(body, encoding, tenantId, budget, o.http.maxSpans);
      if (!stamped.ok) {
        if ("otherTenant" in stamped) {
          return {
            ok: false,
            status: 403,
            message: `a resource names tenant ${JSON.stringify(stamped.otherTenant)} (${o.tenantAttribute}); this API key's tenant is ${JSON.stringify(tenantId)}`,
          };
        }
        if ("tooManySpans" in stamped) {
          return {
            ok: false,
            status: 413,
            message: `the request holds ${String(stamped.tooManySpans)} spans; one may hold at most ${String(o.http.maxSpans)}: export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
          };
        }
        return {
          ok: false,
          status: 413,
          message: `one span takes ${String(stamped.spanBytes)} bytes, over the ${String(budget)} a record of ${deps.topic} may hold`,
        };
      }
      if (stamped.values.length === 0) return { ok: true, spans: 0 };
      // New traces first: a request refused for its spans is not new when it is sent again.
      const traces = await limits.newTraces.admit(tenantId, stamped.traceIds, "all");
      if (traces.retryAfterSeconds !== null) {
        return {
          ok: false,
          status: 429,
          retryAfterSeconds: traces.retryAfterSeconds,
          message: `tenant ${JSON.stringify(tenantId)} started more than ${String(limits.newTraces.perMinute)} new traces a minute: retry in ${String(traces.retryAfterSeconds)} s`,
        };
      }
      const wait = await limits.spans.take(tenantId, stamped.spans);
      if (wait !== null) {
        return {
          ok: false,
          status: 429,
          retryAfterSeconds: wait,
          message: `tenant ${JSON.stringify(tenantId)} sent more than ${String(o.http.spansPerMinute)} spans a minute over OTLP/HTTP: retry in ${String(wait)} s`,
        };
      }
      // Keyed by trace: a tenant's requests spread over the partitions, as the Collector's
      // Kafka exporter spreads them with partition_traces_by_id.
      await deps.send(stamped.firstTraceId ?? tenantId, stamped.values);
      return { ok: true, spans: stamped.spans };
    },
  };
}

/**
 * OTLP over HTTP (`POST /v1/traces`): each request validated, its resources stamped with the API
 * key's tenant (on `OTLP_HTTP_WORKERS` worker threads, off the event loop), and produced to the
 * OTLP topic the bridge consumes, answered only once the brokers acknowledged it (acks from every
 * in-sync replica). The bridge then treats it as any record of the topic: nothing accepted is lost
 * if a bridge restarts, and there is one path into task events.
 */
export function buildOtlpHttpIngest(
  config: Config,
  topic: string,
  deps: { kafka: KafkaClient; limits: SizeLimits; registry: Registry; redis?: ReturnType<typeof buildRedis> },
) {
  const o = config.otlp;
  const names = { tenantAttribute: o.tenantAttribute, projectAttribute: o.projectAttribute };
  const pool = o.http.workers > 0 ? createOtlpStampPool({ size: o.http.workers, ...names }) : null;
  const stamper = pool ? null : createOtlpTenantStamper(names);
  // Not idempotent: a retried send may store a record twice, and the bridge stores a span once.
  // A few quick retries only: past them the exporter is answered 503 and retries itself.
  const producer = createRequestProducer(deps.kafka);
  const spans = new Counter({
    name: "reflector_otlp_http_spans_total",
    help: "Spans received over OTLP/HTTP, by result (accepted: acknowledged by Kafka; refused: a 4xx request's)",
    labelNames: ["result"] as const,
    registers: [deps.registry],
  });
  const ingest = createOtlpHttpIngest({
    otlp: o,
    topic,
    limits: otlpTenantLimits(config, deps.redis),
    stamp: (body, encoding, tenantId, maxRecordBytes, maxSpans) =>
      pool
        ? pool.stamp(body, encoding, tenantId, maxRecordBytes, maxSpans)
        : (stamper ?? createOtlpTenantStamper(names)).stamp(
            body,
            encoding,
            tenantId,
            maxRecordBytes,
            maxSpans,
          ),
    recordBudget: () =>
      Math.min(deps.limits.topicBytes(topic), deps.limits.requestBytes) - batchOverheadBytes - 1_024,
    send: async (key, values) => {
      try {
        await producer.send({ topic, acks: -1, messages: values.map((value) => ({ key, value })) });
      } catch (err) {
        throw new ReflectorError("PUBLISH_FAILED", `kafka produce to ${topic}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    },
    observe: (result, count) => {
      spans.inc({ result }, count);
    },
  });
  return {
    ingest,
    connect: () => producer.connect(),
    disconnect: async () => {
      await producer.disconnect();
      await pool?.close();
    },
  };
}
