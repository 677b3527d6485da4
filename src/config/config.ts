import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import { parseTenantTopicBinding, tenantOfTopic } from "../domain/tenant-topic-binding.js";
import { parseApiKeys } from "./api-keys-setting.js";
import {
  spendAndTenancyConfig,
  spendAndTenancyEnv,
  tenancyProblems,
  type SpendAndTenancyConfig,
} from "./spend-and-tenancy.js";
import { boolFlag, presentOnly } from "./env-parsing.js";
import { TracingEnvSchema, tracingConfigOf, type TracingConfig } from "./tracing-settings.js";
import {
  securedConnections,
  securedConnectionsProblems,
  SecuredConnectionsSchema,
  type SecuredConnections,
} from "./secured-connections.js";

export { loadTracingConfig, type TracingConfig } from "./tracing-settings.js";

const csv = z
  .string()
  .transform((value) =>
    value
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part.length > 0),
  )
  .pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, "each broker must be host:port")).min(1));

const topicName = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, "letters, digits, '.', '_' and '-' only");
const optionalUrl = z.url().optional();

/**
 * Where `scripts/services.sh models` puts the local embedding model: under the package root (two
 * levels above this file in src/ and in dist/ alike), so the default holds whatever the cwd.
 */
export const defaultEmbeddingModelDir = fileURLToPath(
  new URL("../../.services/models/all-minilm-l6-v2", import.meta.url),
);

/** Every setting Reflector reads, from environment variables. Documented in README.md. */
const CoreEnvSchema = z.object({
  ...spendAndTenancyEnv,
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
  /** `key:tenant` pairs for the HTTP API's bearer keys; unset = the /api and /orchestrator routes answer 401. */
  API_KEYS: z.string().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  REFLECTOR_GENERATOR: z.enum(["heuristic", "openai"]).default("heuristic"),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: optionalUrl,
  REFLECTOR_MODEL: z.string().min(1).optional(),
  OPENAI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  /** Postgres connections per process; unset = derived from CONSUMER_MAX_IN_FLIGHT (see loadConfig). */
  PG_POOL_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  LLM_CIRCUIT_FAILURE_THRESHOLD: z.coerce.number().int().min(1).max(1000).default(5),
  LLM_CIRCUIT_OPEN_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  LLM_INPUT_PRICE_PER_MTOK_USD: z.coerce.number().min(0).default(0),
  LLM_OUTPUT_PRICE_PER_MTOK_USD: z.coerce.number().min(0).default(0),
  /** Upper bound on the estimated tokens of one generator request (src/adapters/llm/token-estimate.ts). */
  LLM_PROMPT_MAX_TOKENS: z.coerce.number().int().min(3_000).max(1_000_000).default(16_000),
  /** The most tokens a model may answer with (`max_completion_tokens` of every chat request). */
  LLM_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(256).max(100_000).default(2_000),
  /**
   * `static`: the local model's token vectors, distilled once by `npm run models` (meaning at the
   * cost of a lookup); `local`: the sentence-embedding model itself on the CPU; `openai`: an
   * embeddings endpoint; `hashing`: the lexical fallback (words, not meaning).
   */
  REFLECTOR_EMBEDDINGS: z.enum(["static", "local", "openai", "hashing"]).default("static"),
  REFLECTOR_EMBEDDING_MODEL: z.string().min(1).optional(),
  /** Directory of the local model (model.onnx, tokenizer.json); unset = defaultEmbeddingModelDir. */
  REFLECTOR_EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  REFLECTOR_EVALUATOR_MODEL: z.string().min(1).optional(),
  REFLECTOR_MODE: z.enum(["lite", "full"]).default("full"),
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
  // Most in-flight events wait (Redis, the running group commit, the Kafka transaction) rather
  // than compute: more of them make larger groups and transactions (docs/benchmarks.md, e2e).
  // LLM calls have their own cap (LLM_MAX_CONCURRENT_CALLS).
  CONSUMER_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(10_000).default(256),
  CONSUMER_MAX_IN_FLIGHT_PER_PARTITION: z.coerce.number().int().min(1).max(10_000).default(64),
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
  SHUTDOWN_DEADLINE_MS: z.coerce.number().int().min(1000).default(25_000),
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
  DREAM_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
  DREAM_MIN_IMPORTANCE: z.coerce.number().min(0).max(1).default(0.7),
  PRUNE_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
  PRUNE_OLDER_THAN_DAYS: z.coerce.number().int().min(1).default(90),
  PRUNE_MAX_IMPORTANCE: z.coerce.number().min(0).max(1).default(0.3),
  // ---- Secured connections: TLS, SASL and credentials (src/config/secured-connections.ts) ----
  ...SecuredConnectionsSchema.shape,

  // --- OTLP ingest bridge (docs/otlp-ingest.md) ---
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
  // --- end of OTLP ingest bridge ---
});

const EnvSchema = CoreEnvSchema.extend(TracingEnvSchema.shape);

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends SpendAndTenancyConfig {
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
    apiKeys: string;
    lessonMetricsRefreshMs: number;
    /** ALLOW_CLEARTEXT_CREDENTIALS: API keys over plain HTTP from another host are accepted. */
    allowCleartextApiKeys: boolean;
  };
  logLevel: Env["LOG_LEVEL"];
  generator: Env["REFLECTOR_GENERATOR"];
  openai: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    model: string | undefined;
    timeoutMs: number;
    maxRetries: number;
    /** LLM circuit breaker (src/adapters/llm/circuit-breaker.ts). */
    circuitFailureThreshold: number;
    circuitOpenMs: number;
    embeddingModel: string | undefined;
    /** Model of the answer self-evaluation (a lighter one is fine); defaults to `model`. */
    evaluatorModel: string | undefined;
    /** USD per million tokens; 0 = unpriced (cost metrics stay 0). */
    inputPricePerMTokUsd: number;
    outputPricePerMTokUsd: number;
    /** Budget of one generator request in estimated tokens (system + user, repair included). */
    promptMaxTokens: number;
    /** `max_completion_tokens` of every chat request: what one answer may cost at most. */
    maxOutputTokens: number;
  };
  embeddings: Env["REFLECTOR_EMBEDDINGS"];
  /** The local model's directory, absolute (used when `embeddings` is `static` or `local`). */
  embeddingModelDir: string;
  mode: "lite" | "full";
  quality: { storageMinQuality: number; maxAttempts: number; depthMode: "grounded" | "literal" };
  /** When a stored lesson fits a trace, and when a new lesson is a stored one again. */
  memory: MemoryConfig;
  handler: { maxAttempts: number; retryBaseMs: number };
  /** In-flight limits, retry-topic delay and the transactional id (src/adapters/kafka/task-consumer.ts). */
  consumer: {
    maxInFlight: number;
    maxInFlightPerPartition: number;
    retryTopicDelayMs: number;
    transactionalId: string;
    sessionTimeoutMs: number;
    maxRequestBytes: number;
    rejoinDeadlineMs: number;
    maxCrashesPerRecord: number;
    maxCrashingRecords: number;
  };
  shutdownDeadlineMs: number;
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
  maintenance: {
    dreamIntervalMs: number;
    dreamMinImportance: number;
    pruneIntervalMs: number;
    pruneOlderThanDays: number;
    pruneMaxImportance: number;
  };
  /** The OTLP ingest bridge (docs/otlp-ingest.md); `topic` undefined = not run by `start`. */
  otlp: {
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
  };
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Settings that only make sense together; checked on the raw values so every problem is listed. */
function crossFieldProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  // Malformed keys are a configuration problem like any other: listed with the rest at start-up.
  try {
    parseApiKeys(env.API_KEYS ?? "");
  } catch (err) {
    problems.push((err as Error).message);
  }
  const endpoint = env.OPENAI_BASE_URL !== undefined || env.OPENAI_API_KEY !== undefined;
  if (env.REFLECTOR_GENERATOR === "openai") {
    if (!endpoint) {
      problems.push("OPENAI_BASE_URL: REFLECTOR_GENERATOR=openai needs OPENAI_BASE_URL or OPENAI_API_KEY");
    }
    if (env.REFLECTOR_MODEL === undefined) {
      problems.push("REFLECTOR_MODEL: REFLECTOR_GENERATOR=openai needs a model name");
    }
  }
  if (env.REFLECTOR_EMBEDDINGS === "openai") {
    if (!endpoint) {
      problems.push("OPENAI_BASE_URL: REFLECTOR_EMBEDDINGS=openai needs OPENAI_BASE_URL or OPENAI_API_KEY");
    }
    if (env.REFLECTOR_EMBEDDING_MODEL === undefined) {
      problems.push("REFLECTOR_EMBEDDING_MODEL: REFLECTOR_EMBEDDINGS=openai needs an embedding model name");
    }
  }
  // A directory given on purpose that holds no model is a typo worth listing with the rest; the
  // default one, not yet fetched, is reported by the local embedder with the command that fetches it.
  const modelDir = env.REFLECTOR_EMBEDDING_MODEL_DIR;
  const embeddings = env.REFLECTOR_EMBEDDINGS ?? "static";
  if ((embeddings === "local" || embeddings === "static") && modelDir !== undefined) {
    const needed =
      embeddings === "local" ? ["model.onnx", "tokenizer.json"] : ["tokenizer.json", "static-embeddings.f32"];
    const missing = needed.filter((file) => !existsSync(join(modelDir, file)));
    if (missing.length > 0) {
      problems.push(`REFLECTOR_EMBEDDING_MODEL_DIR: ${modelDir} has no ${missing.join(" and ")}`);
    }
  }
  const grace = Number(env.OTLP_TRACE_GRACE_MS ?? 5_000);
  const timeout = Number(env.OTLP_TRACE_TIMEOUT_MS ?? 1_800_000);
  if (Number.isFinite(grace) && Number.isFinite(timeout) && timeout <= grace) {
    problems.push("OTLP_TRACE_TIMEOUT_MS: must be longer than OTLP_TRACE_GRACE_MS");
  }
  return problems;
}

/** Parses the environment once; lists every problem at once rather than the first. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = presentOnly(env);
  const parsed = EnvSchema.safeParse(present);
  const crossProblems = [...crossFieldProblems(present), ...securedConnectionsProblems(present)];
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
  // Under the binding, OTLP traces are bound like task events: the bridge publishes to one tenant's
  // topic, and that tenant is every trace's (a resource naming another is refused).
  let otlpBoundTenant: string | undefined;
  const binding = e.TENANT_TOPIC_BINDING ? parseTenantTopicBinding(e.TENANT_TOPIC_BINDING) : null;
  if (binding && e.OTLP_TOPIC !== undefined && tenancy.length === 0) {
    const taskTopic = e.OTLP_TASK_TOPIC ?? e.TOPIC_TASK_COMPLETED;
    otlpBoundTenant = tenantOfTopic(binding, taskTopic) ?? undefined;
    if (otlpBoundTenant === undefined) {
      tenancy.push(
        `OTLP_TASK_TOPIC: under TENANT_TOPIC_BINDING the bridge publishes to a topic bound to one tenant; ${taskTopic} is bound to none`,
      );
    }
  }
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
    // Every in-flight event needs a connection for its transaction (and up to three at once for
    // its reads); a pool much smaller than the in-flight limit makes events queue for connections
    // (and, past connectionTimeoutMillis, look like a Postgres outage). Capped so that a few pods
    // stay under Postgres' default max_connections of 100 (docs/benchmarks.md).
    databasePoolMax: e.PG_POOL_MAX ?? Math.min(e.CONSUMER_MAX_IN_FLIGHT, 32),
    redis: { url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX, tlsCaFile: secured.redisTlsCaFile },
    http: {
      host: e.HTTP_HOST,
      port: e.HTTP_PORT,
      apiKeys: e.API_KEYS ?? "",
      lessonMetricsRefreshMs: e.LESSON_METRICS_REFRESH_MS,
      allowCleartextApiKeys: e.ALLOW_CLEARTEXT_CREDENTIALS,
    },
    logLevel: e.LOG_LEVEL,
    generator: e.REFLECTOR_GENERATOR,
    openai: {
      apiKey: e.OPENAI_API_KEY,
      baseUrl: e.OPENAI_BASE_URL,
      model: e.REFLECTOR_MODEL,
      timeoutMs: e.OPENAI_TIMEOUT_MS,
      maxRetries: e.OPENAI_MAX_RETRIES,
      circuitFailureThreshold: e.LLM_CIRCUIT_FAILURE_THRESHOLD,
      circuitOpenMs: e.LLM_CIRCUIT_OPEN_MS,
      embeddingModel: e.REFLECTOR_EMBEDDING_MODEL,
      evaluatorModel: e.REFLECTOR_EVALUATOR_MODEL,
      inputPricePerMTokUsd: e.LLM_INPUT_PRICE_PER_MTOK_USD,
      outputPricePerMTokUsd: e.LLM_OUTPUT_PRICE_PER_MTOK_USD,
      promptMaxTokens: e.LLM_PROMPT_MAX_TOKENS,
      maxOutputTokens: e.LLM_MAX_OUTPUT_TOKENS,
    },
    embeddings: e.REFLECTOR_EMBEDDINGS,
    embeddingModelDir: e.REFLECTOR_EMBEDDING_MODEL_DIR
      ? resolve(e.REFLECTOR_EMBEDDING_MODEL_DIR)
      : defaultEmbeddingModelDir,
    mode: e.REFLECTOR_MODE,
    quality: {
      storageMinQuality: e.STORAGE_MIN_QUALITY,
      maxAttempts: e.MAX_REFLECTION_ATTEMPTS,
      depthMode: e.REFLECTOR_DEPTH_MODE,
    },
    memory: {
      reuseMinSimilarity: e.MEMORY_REUSE_MIN_SIMILARITY,
      mergeMinSimilarity: e.MEMORY_MERGE_MIN_SIMILARITY,
    },
    handler: { maxAttempts: e.HANDLER_MAX_ATTEMPTS, retryBaseMs: e.HANDLER_RETRY_BASE_MS },
    consumer: {
      maxInFlight: e.CONSUMER_MAX_IN_FLIGHT,
      maxInFlightPerPartition: e.CONSUMER_MAX_IN_FLIGHT_PER_PARTITION,
      retryTopicDelayMs: e.RETRY_TOPIC_DELAY_MS,
      // Stable across restarts of one instance, so a restarted process fences its predecessor.
      transactionalId: e.KAFKA_TRANSACTIONAL_ID ?? `${e.KAFKA_GROUP_ID}.${hostname()}`,
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      maxRequestBytes: e.KAFKA_MAX_REQUEST_BYTES,
      rejoinDeadlineMs: e.CONSUMER_REJOIN_DEADLINE_MS,
      maxCrashesPerRecord: e.CONSUMER_MAX_CRASHES_PER_RECORD,
      maxCrashingRecords: e.CONSUMER_MAX_CRASHING_RECORDS,
    },
    shutdownDeadlineMs: e.SHUTDOWN_DEADLINE_MS,
    tracing: tracingConfigOf(e),
    lagRefreshMs: e.LAG_REFRESH_MS,
    guardrails: {
      alignmentThreshold: e.GUARDRAIL_ALIGNMENT_THRESHOLD,
      driftThreshold: e.GUARDRAIL_DRIFT_THRESHOLD,
      maxReruns: e.GUARDRAIL_MAX_RERUNS,
      fatigueCriticalThreshold: e.GUARDRAIL_FATIGUE_THRESHOLD,
      biasRepetitionThreshold: e.GUARDRAIL_BIAS_REPETITION_THRESHOLD,
    },
    maintenance: {
      dreamIntervalMs: e.DREAM_INTERVAL_MS,
      dreamMinImportance: e.DREAM_MIN_IMPORTANCE,
      pruneIntervalMs: e.PRUNE_INTERVAL_MS,
      pruneOlderThanDays: e.PRUNE_OLDER_THAN_DAYS,
      pruneMaxImportance: e.PRUNE_MAX_IMPORTANCE,
    },
    otlp: {
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
      boundTenant: otlpBoundTenant,
    },
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
