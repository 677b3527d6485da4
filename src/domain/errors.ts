/**
 * The one error type of Reflector. Every code is in `errorCodes`; docs/error-codes.md lists
 * them and a test keeps the two in sync.
 */
export const errorCodes = {
  DECODE_FAILED: {
    action: "dead-letter",
    summary: "The value is neither JSON nor a Confluent wire-format JSON payload.",
  },
  SCHEMA_INVALID: { action: "dead-letter", summary: "The value decoded but does not match the contract." },
  UNSUPPORTED_SCHEMA_VERSION: {
    action: "dead-letter",
    summary: "schemaVersion is not one this build reads.",
  },
  FEEDBACK_UNKNOWN_REFLECTION: {
    action: "dead-letter",
    summary: "Feedback names a reflection id that the tenant does not have.",
  },
  FEEDBACK_CONFLICT: {
    action: "dead-letter",
    summary: "The feedback id was already used for another reflection or rating.",
  },
  TENANT_TOPIC_MISMATCH: {
    action: "dead-letter",
    summary: "The event's tenantId is not the tenant TENANT_TOPIC_BINDING binds to the topic it arrived on.",
  },
  REGISTRY_UNAVAILABLE: { action: "retry", summary: "The schema registry could not be reached." },
  STORE_UNAVAILABLE: { action: "retry", summary: "Postgres could not be reached or the transaction failed." },
  INDEX_UNAVAILABLE: { action: "retry", summary: "Redis could not be reached." },
  GENERATOR_FAILED: {
    action: "retry",
    summary: "The reflection generator failed in a way that may pass on retry.",
  },
  LLM_UNAVAILABLE: {
    action: "retry",
    summary: "The LLM endpoint is unreachable, timing out, rate limiting or failing (5xx).",
  },
  LLM_MISCONFIGURED: {
    action: "retry",
    summary: "The LLM endpoint refuses the credentials or does not know the model (401/403/404).",
  },
  LLM_OUTPUT_INVALID: {
    action: "retry",
    summary: "The model's output stayed invalid after one repair request.",
  },
  LLM_CIRCUIT_OPEN: {
    action: "retry",
    summary: "The LLM circuit breaker is open; the consumer pauses until a call succeeds again.",
  },
  LLM_BUDGET_EXHAUSTED: {
    action: "retry",
    summary:
      "The tenant's LLM token budget is spent (LLM_OVER_BUDGET=wait): the event is held until it resets.",
  },
  PUBLISH_FAILED: { action: "retry", summary: "Producing to Kafka failed." },
  DATA_REJECTED: {
    action: "dead-letter",
    summary:
      "Postgres refused the event's data (a NUL byte, a value out of range, an index or search-vector limit).",
  },
  OUTPUT_TOO_LARGE: {
    action: "dead-letter",
    summary: "An output record would be larger than its topic accepts (max.message.bytes).",
  },
  CRASH_LOOP: {
    action: "dead-letter",
    summary:
      "The record made the processor crash, or was delivered without finishing, CONSUMER_MAX_CRASHES_PER_RECORD times.",
  },
  RETRIES_EXHAUSTED: {
    action: "dead-letter",
    summary: "A retryable failure kept failing past the retry budget.",
  },
  CONFIG_INVALID: { action: "crash", summary: "Configuration is invalid; the process must not start." },
  KAFKA_AUTH_FAILED: {
    action: "crash",
    summary: "The broker refused the SASL user or password (KAFKA_SASL_*); not retried.",
  },
  KAFKA_TLS_FAILED: {
    action: "crash",
    summary:
      "TLS to the broker failed: its certificate is not trusted (KAFKA_SSL_CA_FILE) or it does not speak TLS; not retried.",
  },
  SCHEMA_BEHIND: {
    action: "crash",
    summary: "The database lacks migrations this build needs; run `reflector migrate` first.",
  },
  INTERNAL: { action: "crash", summary: "A bug: an invariant did not hold." },
} as const satisfies Record<string, { action: FailureAction; summary: string }>;

export type FailureAction = "retry" | "dead-letter" | "crash";
export type ErrorCode = keyof typeof errorCodes;

export class ReflectorError extends Error {
  override readonly name = "ReflectorError";
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  get retryable(): boolean {
    return errorCodes[this.code].action === "retry";
  }
}

// Node/pg/ioredis report transport trouble with these codes; all of them may pass on retry.
const transientCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "57P01", // admin_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "40001", // serialization_failure
  "40P01", // deadlock_detected
]);

/** Total: every thrown value maps to exactly one action. */
export function classifyFailure(err: unknown): FailureAction {
  if (err instanceof ReflectorError) return errorCodes[err.code].action;
  if (typeof err === "object" && err !== null) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && transientCodes.has(code)) return "retry";
    const retriable = (err as { retriable?: unknown }).retriable; // kafkajs marks its errors this way
    if (retriable === true) return "retry";
    if (err instanceof Error && /connection|connect|socket|timeout/i.test(err.message)) return "retry";
  }
  return "crash";
}

// A dependency is down, not the event bad: the consumer pauses and retries without spending the
// event's attempts, committing nothing past the event. Adapters mark their outages with these codes.
const outageCodes = new Set<ErrorCode>([
  "STORE_UNAVAILABLE",
  "INDEX_UNAVAILABLE",
  "PUBLISH_FAILED",
  "REGISTRY_UNAVAILABLE",
  "LLM_UNAVAILABLE",
  "LLM_MISCONFIGURED",
  "LLM_CIRCUIT_OPEN",
]);

/** True when a retryable failure is an outage of a dependency (Postgres, Redis, Kafka, registry, LLM). */
export function isOutage(err: unknown): boolean {
  if (err instanceof ReflectorError) return outageCodes.has(err.code);
  // Untyped transport errors (pg, ioredis, kafkajs) are outages by definition.
  return classifyFailure(err) === "retry";
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
