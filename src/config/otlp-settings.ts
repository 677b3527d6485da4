import { z } from "zod";
import { parseTenantTopicBinding, tenantOfTopic } from "../domain/tenant-topic-binding.js";
import { topicName } from "./env-parsing.js";

/**
 * The settings of the OTLP ingest bridge (docs/otlp-ingest.md): their environment variables,
 * their part of `Config` and their checks. `config.ts` spreads them into the one schema.
 */

export const otlpEnv = {
  /** Topic of OTLP trace records (a Collector's Kafka exporter); set = `start` runs the bridge too. */
  OTLP_TOPIC: topicName.optional(),
  /** The bridge's consumer group; unset = `<KAFKA_GROUP_ID>.otlp`. */
  OTLP_GROUP_ID: z.string().min(1).optional(),
  OTLP_TENANT_ATTRIBUTE: z.string().min(1).max(200).default("reflector.tenant_id"),
  OTLP_PROJECT_ATTRIBUTE: z.string().min(1).max(200).default("reflector.project_id"),
  OTLP_DEFAULT_TENANT: z.string().trim().min(1).max(200).default("default"),
  OTLP_DEFAULT_PROJECT: z.string().trim().min(1).max(200).default("default"),
  /** How long after its root span arrived a trace waits for late children. */
  OTLP_TRACE_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  /** A trace without a root this long after its first span is expired (dropped, counted). */
  OTLP_TRACE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(7 * 86_400_000)
    .default(1_800_000),
  OTLP_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /** Spans one trace may hold; past it the trace is closed as oversized (its spans dropped). */
  OTLP_MAX_SPANS_PER_TRACE: z.coerce.number().int().min(1).max(10_000_000).default(20_000),
  /** Bytes of stored spans one trace may hold; past it the trace is closed as oversized. */
  OTLP_MAX_TRACE_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(2 ** 40)
    .default(64 * 1024 * 1024),
  /**
   * Where the bridge publishes its task events; unset = TOPIC_TASK_COMPLETED. Under
   * TENANT_TOPIC_BINDING it must be a topic bound to one tenant, and every trace is that tenant's.
   */
  OTLP_TASK_TOPIC: topicName.optional(),
  /** The largest OTLP/HTTP request body taken, after gzip is undone; larger ones are answered 413. */
  OTLP_HTTP_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(64 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  /** Spans one OTLP/HTTP request may hold; more are answered 413 (exporters send 512 by default). */
  OTLP_HTTP_MAX_SPANS: z.coerce.number().int().min(1).max(1_000_000).default(4_096),
  /** OTLP/HTTP requests one API key may send a minute, per process; more are answered 429. */
  OTLP_HTTP_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /**
   * Spans one tenant may send over OTLP/HTTP a minute, counted in Redis across every pod; more
   * are answered 429.
   */
  OTLP_HTTP_SPANS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000_000).default(200_000),
  /**
   * New trace ids one tenant may start a minute, across every pod, OTLP/HTTP and the bridge
   * together: over it a request is answered 429 and the bridge drops the new traces (counted).
   */
  OTLP_NEW_TRACES_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(20_000),
  /**
   * Worker threads that parse and stamp OTLP/HTTP requests, off the event loop that serves the
   * processor and the API; 0 parses on the event loop.
   */
  OTLP_HTTP_WORKERS: z.coerce.number().int().min(0).max(64).default(2),
};

type OtlpEnv = z.infer<z.ZodObject<typeof otlpEnv>>;

/** The OTLP ingest bridge (docs/otlp-ingest.md); `topic` undefined = not run by `start`. */
export interface OtlpConfig {
  topic: string | undefined;
  groupId: string;
  tenantAttribute: string;
  projectAttribute: string;
  defaultTenant: string;
  defaultProject: string;
  graceMs: number;
  timeoutMs: number;
  sweepIntervalMs: number;
  maxSpansPerTrace: number;
  maxTraceBytes: number;
  /** OTLP_NEW_TRACES_PER_MINUTE: new trace ids a tenant may start a minute (HTTP and the bridge). */
  newTracesPerMinute: number;
  /** OTLP/HTTP's bounds (`OTLP_HTTP_*`): body, spans per request, rates, parsing workers. */
  http: {
    maxBodyBytes: number;
    maxSpans: number;
    requestsPerMinute: number;
    spansPerMinute: number;
    workers: number;
  };
  /** Where its events go (TOPIC_TASK_COMPLETED unless OTLP_TASK_TOPIC says otherwise). */
  taskTopic: string;
  /** Under TENANT_TOPIC_BINDING: the tenant bound to `taskTopic`, whose every trace is. */
  boundTenant: string | undefined;
}

/** The settings that only make sense together; checked on the raw values so every problem is listed. */
export function otlpProblems(env: Record<string, string | undefined>): string[] {
  const grace = Number(env.OTLP_TRACE_GRACE_MS ?? 5_000);
  const timeout = Number(env.OTLP_TRACE_TIMEOUT_MS ?? 1_800_000);
  if (Number.isFinite(grace) && Number.isFinite(timeout) && timeout <= grace) {
    return ["OTLP_TRACE_TIMEOUT_MS: must be longer than OTLP_TRACE_GRACE_MS"];
  }
  return [];
}

/**
 * Under TENANT_TOPIC_BINDING, OTLP traces are bound like task events: the bridge publishes to one
 * tenant's topic, and that tenant is every trace's (a resource naming another is refused). Called
 * once the binding itself is known to be valid; `problem` is set when the task topic is bound to none.
 */
export function otlpBoundTenant(
  e: OtlpEnv & { TENANT_TOPIC_BINDING?: string | undefined; TOPIC_TASK_COMPLETED: string },
): { tenant: string | undefined; problem?: string } {
  if (!e.TENANT_TOPIC_BINDING || e.OTLP_TOPIC === undefined) return { tenant: undefined };
  const taskTopic = e.OTLP_TASK_TOPIC ?? e.TOPIC_TASK_COMPLETED;
  const tenant = tenantOfTopic(parseTenantTopicBinding(e.TENANT_TOPIC_BINDING), taskTopic) ?? undefined;
  if (tenant !== undefined) return { tenant };
  return {
    tenant: undefined,
    problem: `OTLP_TASK_TOPIC: under TENANT_TOPIC_BINDING the bridge publishes to a topic bound to one tenant; ${taskTopic} is bound to none`,
  };
}

export function otlpConfigOf(
  e: OtlpEnv & { KAFKA_GROUP_ID: string; TOPIC_TASK_COMPLETED: string },
  boundTenant: string | undefined,
): OtlpConfig {
  return {
    topic: e.OTLP_TOPIC,
    groupId: e.OTLP_GROUP_ID ?? `${e.KAFKA_GROUP_ID}.otlp`,
    tenantAttribute: e.OTLP_TENANT_ATTRIBUTE,
    projectAttribute: e.OTLP_PROJECT_ATTRIBUTE,
    defaultTenant: e.OTLP_DEFAULT_TENANT,
    defaultProject: e.OTLP_DEFAULT_PROJECT,
    graceMs: e.OTLP_TRACE_GRACE_MS,
    timeoutMs: e.OTLP_TRACE_TIMEOUT_MS,
    sweepIntervalMs: e.OTLP_SWEEP_INTERVAL_MS,
    maxSpansPerTrace: e.OTLP_MAX_SPANS_PER_TRACE,
    maxTraceBytes: e.OTLP_MAX_TRACE_BYTES,
    newTracesPerMinute: e.OTLP_NEW_TRACES_PER_MINUTE,
    http: {
      maxBodyBytes: e.OTLP_HTTP_MAX_BODY_BYTES,
      maxSpans: e.OTLP_HTTP_MAX_SPANS,
      requestsPerMinute: e.OTLP_HTTP_REQUESTS_PER_MINUTE,
      spansPerMinute: e.OTLP_HTTP_SPANS_PER_MINUTE,
      workers: e.OTLP_HTTP_WORKERS,
    },
    taskTopic: e.OTLP_TASK_TOPIC ?? e.TOPIC_TASK_COMPLETED,
    boundTenant,
  };
}
