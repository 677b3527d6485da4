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
    taskTopic: e.OTLP_TASK_TOPIC ?? e.TOPIC_TASK_COMPLETED,
    boundTenant,
  };
}
