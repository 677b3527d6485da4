import { hostname } from "node:os";
import { z } from "zod";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import { parseApiKeys, type ApiGrant } from "./api-keys-setting.js";
import { httpSecurityEnv, httpSecurityOf, type HttpSecurityConfig } from "./http-security-settings.js";
import type { ReflectionMode } from "../domain/select-for-reflection.js";
import { qualityOverridesOf, qualitySettingsEnv, type QualitySettings } from "./quality-settings.js";
import {
  promptSettingsEnv,
  reflectionInstructionsOf,
  type ReflectionInstructionsSetting,
} from "./prompt-settings.js";
import { llmConfigOf, llmEnv, llmProblems, type LlmConfig } from "./llm-settings.js";
import { lifecycleEnv, lifecycleOf, type LifecycleConfig } from "./lifecycle-settings.js";
import { maintenanceEnv, maintenanceOf, type MaintenanceSettings } from "./maintenance-settings.js";
import { lessonsIndexEnv, lessonsIndexOf, type LessonsIndexConfig } from "./lessons-index-settings.js";
import { otlpBoundTenant, otlpConfigOf, otlpEnv, otlpProblems, type OtlpConfig } from "./otlp-settings.js";
import {
  spendAndTenancyConfig,
  spendAndTenancyEnv,
  tenancyProblems,
  type SpendAndTenancyConfig,
} from "./spend-and-tenancy.js";
import { boolFlag, ConfigError, deepFreeze, presentOnly, topicName } from "./env-parsing.js";
import { TracingEnvSchema, tracingConfigOf, type TracingConfig } from "./tracing-settings.js";
import {
  securedConnections,
  securedConnectionsProblems,
  SecuredConnectionsSchema,
  type SecuredConnections,
} from "./secured-connections.js";

export { loadTracingConfig, type TracingConfig } from "./tracing-settings.js";
export { ConfigError } from "./env-parsing.js";

const csv = z
  .string()
  .transform((value) =>
    value
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part.length > 0),
  )
  .pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, "each broker must be host:port")).min(1));

const optionalUrl = z.url().optional();

/** Every setting Reflector reads, from environment variables. Documented in README.md. */
const CoreEnvSchema = z.object({
  ...spendAndTenancyEnv,
  ...llmEnv,
  KAFKA_BROKERS: csv.default(["127.0.0.1:9092"]),
  KAFKA_CLIENT_ID: z.string().min(1).default("reflector"),
  KAFKA_GROUP_ID: z.string().min(1).default("reflector"),
  SCHEMA_REGISTRY_URL: optionalUrl,
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .default("postgres://postgres@127.0.0.1:5432/reflector"),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// URL")
    .default("redis://127.0.0.1:6379/0"),
  REDIS_KEY_PREFIX: z.string().min(1).default("reflector"),
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HTTP_HOST: z.string().min(1).default("0.0.0.0"),
  ...httpSecurityEnv,
  ...qualitySettingsEnv,
  ...promptSettingsEnv,
  /** `key:tenant` pairs for the HTTP API's bearer keys; unset = the /api and /orchestrator routes answer 401. */
  API_KEYS: z.string().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Postgres connections per process; unset = derived from CONSUMER_MAX_IN_FLIGHT (see loadConfig). */
  PG_POOL_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  REFLECTOR_MODE: z.enum(["lite", "full"]).default("full"),
  /** false: no reflection at all (mode `off`); the loop guardrails still decide every event. */
  REFLECTIVE_MEMORY_ENABLED: boolFlag.default(true),
  STORAGE_MIN_QUALITY: z.coerce.number().min(0).max(1).default(0.8),
  /**
   * How the judge reads an analysis's depth: `grounded` (by what it names of the trace) or `literal`
   * (the quality rules' indicator words, as written).
   */
  REFLECTOR_DEPTH_MODE: z.enum(["grounded", "literal"]).default("grounded"),
  MAX_REFLECTION_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  MEMORY_REUSE_MIN_SIMILARITY: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(defaultMemoryConfig.reuseMinSimilarity),
  MEMORY_MERGE_MIN_SIMILARITY: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(defaultMemoryConfig.mergeMinSimilarity),
  TOPIC_TASK_COMPLETED: topicName.default("agent.task.completed"),
  TOPIC_REFLECTION_ACCEPTED: topicName.default("reflection.accepted"),
  TOPIC_REFLECTION_REJECTED: topicName.default("reflection.rejected"),
  TOPIC_LOOP_DECISION: topicName.default("loop.decision"),
  TOPIC_DLQ: topicName.default("agent.task.completed.dlq"),
  TOPIC_RETRY: topicName.default("agent.task.completed.retry"),
  TOPIC_REFLECTION_FEEDBACK: topicName.default("reflection.feedback"),
  /** How often a scrape may re-count lessons by effectiveness verdict (one aggregate query). */
  LESSON_METRICS_REFRESH_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  // Most in-flight events wait (Redis, the group commit, the Kafka transaction) rather than compute: more
  // make larger groups and transactions (docs/benchmarks.md, e2e); LLM_MAX_CONCURRENT_CALLS caps calls.
  CONSUMER_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(10_000).default(256),
  CONSUMER_MAX_IN_FLIGHT_PER_PARTITION: z.coerce.number().int().min(1).max(10_000).default(64),
  CONSUMER_MAX_IN_FLIGHT_PER_TENANT: z.coerce.number().int().min(0).max(10_000).default(0),
  CONSUMER_BATCH_ROUND_MS: z.coerce.number().int().min(10).max(30_000).default(1_000),
  CONSUMER_HAND_OVER_AFTER_MS: z.coerce.number().int().min(0).max(3_600_000).default(2_000),
  CONSUMER_MAX_HELD_PER_PARTITION: z.coerce.number().int().min(1).max(100_000).default(1_000),
  CONSUMER_MAX_HELD_BYTES_PER_PARTITION: z.coerce.number().int().min(1).max(1_073_741_824).default(4_194_304),
  RETRY_TOPIC_DELAY_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  KAFKA_TRANSACTIONAL_ID: z.string().min(1).max(200).optional(),
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).max(300_000).default(30_000),
  /** The largest produce request sent (Kafka's producer `max.request.size`); transactions are split under it. */
  KAFKA_MAX_REQUEST_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(100 * 1024 * 1024)
    .default(1_048_576),
  /** Out of its group this long, the consumer reports a crash (the process exits to be restarted). */
  CONSUMER_REJOIN_DEADLINE_MS: z.coerce.number().int().min(10_000).max(3_600_000).default(120_000),
  /** Crashes one record may cause before it is dead-lettered (CRASH_LOOP) instead. */
  CONSUMER_MAX_CRASHES_PER_RECORD: z.coerce.number().int().min(1).max(100).default(3),
  /** More distinct records crashing within 10 minutes than this: the processor is failing; none is dead-lettered. */
  CONSUMER_MAX_CRASHING_RECORDS: z.coerce.number().int().min(1).max(1000).default(3),
  TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(6),
  TOPIC_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(10).default(1),
  ...lifecycleEnv,
  ...lessonsIndexEnv,
  HANDLER_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  HANDLER_RETRY_BASE_MS: z.coerce.number().int().min(1).default(200),
  KAFKA_FROM_BEGINNING: boolFlag.default(true),
  /** How often /metrics' consumer-lag gauges are refreshed; 0 turns the lag poller off. */
  LAG_REFRESH_MS: z.coerce.number().int().min(0).max(3_600_000).default(15_000),
  GUARDRAIL_ALIGNMENT_THRESHOLD: z.coerce.number().min(0).max(1).default(0.75),
  GUARDRAIL_DRIFT_THRESHOLD: z.coerce.number().min(0).max(1).default(0.25),
  GUARDRAIL_MAX_RERUNS: z.coerce.number().int().min(0).max(100).default(3),
  GUARDRAIL_FATIGUE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.5),
  GUARDRAIL_BIAS_REPETITION_THRESHOLD: z.coerce.number().int().min(1).max(100).default(3),
  ...maintenanceEnv,
  // ---- Secured connections: TLS, SASL and credentials (src/config/secured-connections.ts) ----
  ...SecuredConnectionsSchema.shape,
  // ---- OTLP ingest bridge (src/config/otlp-settings.ts) ----
  ...otlpEnv,
});

const EnvSchema = CoreEnvSchema.extend(TracingEnvSchema.shape);

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends SpendAndTenancyConfig, LlmConfig, LifecycleConfig, LessonsIndexConfig {
  kafka: {
    brokers: string[];
    clientId: string;
    groupId: string;
    fromBeginning: boolean;
    /** TLS to the brokers; false = plaintext. */
    ssl: SecuredConnections["kafka"]["ssl"];
    sasl: SecuredConnections["kafka"]["sasl"];
  };
  topics: {
    taskCompleted: string;
    reflectionAccepted: string;
    reflectionRejected: string;
    loopDecision: string;
    deadLetter: string;
    retry: string;
    /** Users' 👍/👎 on stored lessons, consumed by group `<groupId>.feedback`. */
    reflectionFeedback: string;
    partitions: number;
    replicationFactor: number;
  };
  schemaRegistryUrl: string | undefined;
  /** Basic auth and the CA of the schema registry. */
  schemaRegistry: SecuredConnections["schemaRegistry"];
  databaseUrl: string;
  /** The CA that signed Postgres' certificate (DATABASE_URL's sslmode turns TLS on). */
  databaseSslCaFile: string | undefined;
  /** Size of the Postgres connection pool. */
  databasePoolMax: number;
  /** `tlsCaFile`: the CA that signed Redis' certificate (a rediss:// URL turns TLS on). */
  redis: { url: string; keyPrefix: string; tlsCaFile: string | undefined };
  http: {
    host: string;
    port: number;
    /** `API_KEYS`: each key's tenant and roles, parsed at start-up. */
    apiKeys: ReadonlyMap<string, ApiGrant>;
    lessonMetricsRefreshMs: number;
    /** ALLOW_CLEARTEXT_CREDENTIALS: API keys over plain HTTP from another host are accepted. */
    allowCleartextApiKeys: boolean;
  } & HttpSecurityConfig;
  logLevel: Env["LOG_LEVEL"];
  /** REFLECTOR_MODE, or `off` when REFLECTIVE_MEMORY_ENABLED is false. */
  mode: ReflectionMode;
  quality: QualitySettings;
  /** REFLECTOR_PROMPTS_FILE: the task set for a failure and a success, in place of Reflector's. */
  reflectionInstructions?: ReflectionInstructionsSetting;
  /** When a stored lesson fits a trace, and when a new lesson is a stored one again. */
  memory: MemoryConfig;
  handler: { maxAttempts: number; retryBaseMs: number };
  /** In-flight limits, retry-topic delay and the transactional id (src/adapters/kafka/batch-pump.ts, retry-loop.ts). */
  consumer: {
    maxInFlight: number;
    maxInFlightPerPartition: number;
    /** Events one tenant may have in flight at once; 0 for no share. */
    maxInFlightPerTenant: number;
    batchRoundMs: number;
    handOverAfterMs: number;
    maxHeldPerPartition: number;
    maxHeldBytesPerPartition: number;
    retryTopicDelayMs: number;
    transactionalId: string;
    sessionTimeoutMs: number;
    maxRequestBytes: number;
    rejoinDeadlineMs: number;
    maxCrashesPerRecord: number;
    maxCrashingRecords: number;
  };
  /** OpenTelemetry tracing of the processor (src/observability/tracing.ts). */
  tracing: TracingConfig;
  /** Consumer-lag gauges' refresh interval (src/adapters/kafka/admin/lag-poller.ts); 0 = off. */
  lagRefreshMs: number;
  /** Loop guardrails (docs/specification.md#loop-guardrails). */
  guardrails: {
    alignmentThreshold: number;
    driftThreshold: number;
    maxReruns: number;
    fatigueCriticalThreshold: number;
    biasRepetitionThreshold: number;
  };
  /** Dreaming and pruning; interval 0 = not scheduled in the processor. */
  maintenance: MaintenanceSettings;
  /** The OTLP ingest bridge (docs/otlp-ingest.md); `topic` undefined = not run by `start`. */
  otlp: OtlpConfig;
}

/** `API_KEYS`, parsed here once; malformed keys are a problem listed with the rest at start-up. */
function readApiKeys(spec: string | undefined): { keys: ReadonlyMap<string, ApiGrant>; problems: string[] } {
  try {
    return { keys: parseApiKeys(spec ?? ""), problems: [] };
  } catch (err) {
    return { keys: new Map(), problems: [(err as Error).message] };
  }
}

/** Settings that only make sense together; checked on the raw values so every problem is listed. */
function crossFieldProblems(env: Record<string, string | undefined>): string[] {
  return [...llmProblems(env), ...otlpProblems(env)];
}

/** Parses the environment once; lists every problem at once rather than the first. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = presentOnly(env);
  const parsed = EnvSchema.safeParse(present);
  const apiKeys = readApiKeys(present.API_KEYS);
  const quality = qualityOverridesOf(present.QUALITY_CONFIG_FILE);
  const prompts = reflectionInstructionsOf(present.REFLECTOR_PROMPTS_FILE);
  const crossProblems = [
    ...apiKeys.problems,
    ...quality.problems,
    ...prompts.problems,
    ...crossFieldProblems(present),
    ...securedConnectionsProblems(present),
  ];
  if (!parsed.success || crossProblems.length > 0) {
    throw new ConfigError([
      ...(parsed.error?.issues ?? []).map((issue) => `${issue.path.join(".") || "(env)"}: ${issue.message}`),
      ...crossProblems,
      ...tenancyProblems(present.TENANT_TOPIC_BINDING, null),
    ]);
  }
  const e = parsed.data;
  const ownTopics = [
    e.TOPIC_REFLECTION_ACCEPTED,
    e.TOPIC_REFLECTION_REJECTED,
    e.TOPIC_LOOP_DECISION,
    e.TOPIC_DLQ,
    e.TOPIC_RETRY,
    e.TOPIC_REFLECTION_FEEDBACK,
  ];
  const tenancy = tenancyProblems(e.TENANT_TOPIC_BINDING, [
    ...ownTopics,
    ...(e.OTLP_TOPIC !== undefined ? [e.OTLP_TOPIC] : []),
  ]);
  // Only once the binding itself is valid: the tenant of the bridge's task topic.
  const otlpBound = tenancy.length === 0 ? otlpBoundTenant(e) : { tenant: undefined };
  if (otlpBound.problem !== undefined) tenancy.push(otlpBound.problem);
  if (tenancy.length > 0) throw new ConfigError(tenancy);
  const secured = securedConnections(e);
  return deepFreeze({
    ...spendAndTenancyConfig(e),
    kafka: {
      brokers: e.KAFKA_BROKERS,
      clientId: e.KAFKA_CLIENT_ID,
      groupId: e.KAFKA_GROUP_ID,
      fromBeginning: e.KAFKA_FROM_BEGINNING,
      ...secured.kafka,
    },
    topics: {
      taskCompleted: e.TOPIC_TASK_COMPLETED,
      reflectionAccepted: e.TOPIC_REFLECTION_ACCEPTED,
      reflectionRejected: e.TOPIC_REFLECTION_REJECTED,
      loopDecision: e.TOPIC_LOOP_DECISION,
      deadLetter: e.TOPIC_DLQ,
      retry: e.TOPIC_RETRY,
      reflectionFeedback: e.TOPIC_REFLECTION_FEEDBACK,
      partitions: e.TOPIC_PARTITIONS,
      replicationFactor: e.TOPIC_REPLICATION_FACTOR,
    },
    schemaRegistryUrl: e.SCHEMA_REGISTRY_URL,
    schemaRegistry: secured.schemaRegistry,
    databaseUrl: e.DATABASE_URL,
    databaseSslCaFile: secured.databaseSslCaFile,
    // Each in-flight event needs a connection for its transaction (up to three for its reads): a much smaller
    // pool queues events (past connectionTimeoutMillis, a Postgres outage). Capped so that a few pods stay
    // under Postgres' default max_connections of 100 (docs/benchmarks.md).
    databasePoolMax: e.PG_POOL_MAX ?? Math.min(e.CONSUMER_MAX_IN_FLIGHT, 32),
    redis: { url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX, tlsCaFile: secured.redisTlsCaFile },
    http: {
      host: e.HTTP_HOST,
      port: e.HTTP_PORT,
      apiKeys: apiKeys.keys,
      lessonMetricsRefreshMs: e.LESSON_METRICS_REFRESH_MS,
      allowCleartextApiKeys: e.ALLOW_CLEARTEXT_CREDENTIALS,
      ...httpSecurityOf(e),
    },
    logLevel: e.LOG_LEVEL,
    ...llmConfigOf(e),
    mode: e.REFLECTIVE_MEMORY_ENABLED ? e.REFLECTOR_MODE : "off",
    quality: {
      storageMinQuality: e.STORAGE_MIN_QUALITY,
      maxAttempts: e.MAX_REFLECTION_ATTEMPTS,
      depthMode: e.REFLECTOR_DEPTH_MODE,
      ...(quality.overrides ? { overrides: quality.overrides } : {}),
    },
    ...(prompts.instructions ? { reflectionInstructions: prompts.instructions } : {}),
    memory: {
      reuseMinSimilarity: e.MEMORY_REUSE_MIN_SIMILARITY,
      mergeMinSimilarity: e.MEMORY_MERGE_MIN_SIMILARITY,
    },
    handler: { maxAttempts: e.HANDLER_MAX_ATTEMPTS, retryBaseMs: e.HANDLER_RETRY_BASE_MS },
    consumer: {
      maxInFlight: e.CONSUMER_MAX_IN_FLIGHT,
      maxInFlightPerPartition: e.CONSUMER_MAX_IN_FLIGHT_PER_PARTITION,
      maxInFlightPerTenant: e.CONSUMER_MAX_IN_FLIGHT_PER_TENANT,
      batchRoundMs: e.CONSUMER_BATCH_ROUND_MS,
      handOverAfterMs: e.CONSUMER_HAND_OVER_AFTER_MS,
      maxHeldPerPartition: e.CONSUMER_MAX_HELD_PER_PARTITION,
      maxHeldBytesPerPartition: e.CONSUMER_MAX_HELD_BYTES_PER_PARTITION,
      retryTopicDelayMs: e.RETRY_TOPIC_DELAY_MS,
      // Stable across restarts of one instance, so a restarted process fences its predecessor.
      transactionalId: e.KAFKA_TRANSACTIONAL_ID ?? `${e.KAFKA_GROUP_ID}.${hostname()}`,
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      maxRequestBytes: e.KAFKA_MAX_REQUEST_BYTES,
      rejoinDeadlineMs: e.CONSUMER_REJOIN_DEADLINE_MS,
      maxCrashesPerRecord: e.CONSUMER_MAX_CRASHES_PER_RECORD,
      maxCrashingRecords: e.CONSUMER_MAX_CRASHING_RECORDS,
    },
    ...lifecycleOf(e),
    ...lessonsIndexOf(e),
    tracing: tracingConfigOf(e),
    lagRefreshMs: e.LAG_REFRESH_MS,
    guardrails: {
      alignmentThreshold: e.GUARDRAIL_ALIGNMENT_THRESHOLD,
      driftThreshold: e.GUARDRAIL_DRIFT_THRESHOLD,
      maxReruns: e.GUARDRAIL_MAX_RERUNS,
      fatigueCriticalThreshold: e.GUARDRAIL_FATIGUE_THRESHOLD,
      biasRepetitionThreshold: e.GUARDRAIL_BIAS_REPETITION_THRESHOLD,
    },
    maintenance: maintenanceOf(e),
    otlp: otlpConfigOf(e, otlpBound.tenant),
  });
}

/** Every variable Reflector reads; a test keeps the README's table in step with it. */
export const envVariableNames = Object.keys(EnvSchema.shape) as (keyof Env)[];

/** Every topic Reflector reads or writes: input, the three outputs, DLQ, retry, feedback (and OTLP_TOPIC when set). */
export function topicNames(config: Config): string[] {
  const t = config.topics;
  return [
    t.taskCompleted,
    t.reflectionAccepted,
    t.reflectionRejected,
    t.loopDecision,
    t.deadLetter,
    t.retry,
    t.reflectionFeedback,
    ...(config.otlp.topic !== undefined ? [config.otlp.topic] : []),
    ...(config.otlp.topic !== undefined && config.otlp.taskTopic !== t.taskCompleted
      ? [config.otlp.taskTopic]
      : []),
  ];
}
