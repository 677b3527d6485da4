/**
 * What a failure makes a consumer do with its event, and why:
 * - `retry`, of kind `outage` (a dependency is down: the consumer pauses and retries without
 *   spending the event's attempts), `hold` (the tenant's LLM budget is spent: the event waits, the
 *   others go on) or `transient` (the event's own attempt failed: it spends one);
 * - `dead-letter`, kind `rejected`: the event is bad, or it kept failing;
 * - `crash`, kind `fatal`: a bug or a set-up that must not run; the process stops.
 */
export type FailureAction = "retry" | "dead-letter" | "crash";
export type FailureKind = "outage" | "hold" | "transient" | "rejected" | "fatal";

type CodeEntry =
  | { action: "retry"; kind: "outage" | "hold" | "transient"; summary: string }
  | { action: "dead-letter"; kind: "rejected"; summary: string }
  | { action: "crash"; kind: "fatal"; summary: string };

/**
 * The one error type of Reflector. Every code is in `errorCodes`; docs/error-codes.md lists
 * them and a test keeps the two in sync. Knowledge of transports (errno, SQLSTATE, a client's
 * flags) stays in the adapters, which name their failures with these codes at their edge.
 */
export const errorCodes = {
  DECODE_FAILED: {
    action: "dead-letter",
    kind: "rejected",
    summary: "The value is neither JSON nor a Confluent wire-format JSON payload.",
  },
  SCHEMA_INVALID: {
    action: "dead-letter",
    kind: "rejected",
    summary: "The value decoded but does not match the contract.",
  },
  UNSUPPORTED_SCHEMA_VERSION: {
    action: "dead-letter",
    kind: "rejected",
    summary: "schemaVersion is not one this build reads.",
  },
  FEEDBACK_UNKNOWN_REFLECTION: {
    action: "dead-letter",
    kind: "rejected",
    summary: "Feedback names a reflection id that the tenant does not have.",
  },
  FEEDBACK_CONFLICT: {
    action: "dead-letter",
    kind: "rejected",
    summary: "The feedback id was already used for another reflection or rating.",
  },
  TENANT_TOPIC_MISMATCH: {
    action: "dead-letter",
    kind: "rejected",
    summary: "The event's tenantId is not the tenant TENANT_TOPIC_BINDING binds to the topic it arrived on.",
  },
  REGISTRY_UNAVAILABLE: {
    action: "retry",
    kind: "outage",
    summary: "The schema registry could not be reached.",
  },
  STORE_UNAVAILABLE: {
    action: "retry",
    kind: "outage",
    summary: "Postgres could not be reached or the transaction failed.",
  },
  INDEX_UNAVAILABLE: {
    action: "retry",
    kind: "outage",
    summary: "Redis could not be reached.",
  },
  GENERATOR_FAILED: {
    action: "retry",
    kind: "transient",
    summary: "The reflection generator failed in a way that may pass on retry.",
  },
  LLM_UNAVAILABLE: {
    action: "retry",
    kind: "outage",
    summary: "The LLM endpoint is unreachable, timing out, rate limiting or failing (5xx).",
  },
  LLM_MISCONFIGURED: {
    action: "retry",
    kind: "outage",
    summary: "The LLM endpoint refuses the credentials or does not know the model (401/403/404).",
  },
  LLM_OUTPUT_INVALID: {
    action: "retry",
    kind: "transient",
    summary: "The model's output stayed invalid after one repair request.",
  },
  LLM_CIRCUIT_OPEN: {
    action: "retry",
    kind: "outage",
    summary: "The LLM circuit breaker is open; the consumer pauses until a call succeeds again.",
  },
  LLM_BUDGET_EXHAUSTED: {
    action: "retry",
    kind: "hold",
    summary:
      "The tenant's LLM token budget is spent (LLM_OVER_BUDGET=wait): the event is held until it resets.",
  },
  TRANSPORT: {
    action: "retry",
    kind: "outage",
    summary:
      "A connection failed (refused, reset, timed out) or the Kafka client called its error retriable, where no adapter named it.",
  },
  PUBLISH_FAILED: {
    action: "retry",
    kind: "outage",
    summary: "Producing to Kafka failed.",
  },
  DATA_REJECTED: {
    action: "dead-letter",
    kind: "rejected",
    summary:
      "Postgres refused the event's data (a NUL byte, a value out of range, an index or search-vector limit).",
  },
  OUTPUT_TOO_LARGE: {
    action: "dead-letter",
    kind: "rejected",
    summary: "An output record would be larger than its topic accepts (max.message.bytes).",
  },
  CRASH_LOOP: {
    action: "dead-letter",
    kind: "rejected",
    summary:
      "The record made the processor crash, or was delivered without finishing, CONSUMER_MAX_CRASHES_PER_RECORD times.",
  },
  RETRIES_EXHAUSTED: {
    action: "dead-letter",
    kind: "rejected",
    summary: "A retryable failure kept failing past the retry budget.",
  },
  CONFIG_INVALID: {
    action: "crash",
    kind: "fatal",
    summary: "Configuration is invalid; the process must not start.",
  },
  KAFKA_AUTH_FAILED: {
    action: "crash",
    kind: "fatal",
    summary: "The broker refused the SASL user or password (KAFKA_SASL_*); not retried.",
  },
  KAFKA_TLS_FAILED: {
    action: "crash",
    kind: "fatal",
    summary:
      "TLS to the broker failed: its certificate is not trusted (KAFKA_SSL_CA_FILE) or it does not speak TLS; not retried.",
  },
  SCHEMA_BEHIND: {
    action: "crash",
    kind: "fatal",
    summary: "The database lacks migrations this build needs; run `reflector migrate` first.",
  },
  INTERNAL: {
    action: "crash",
    kind: "fatal",
    summary: "A bug: an invariant did not hold.",
  },
} as const satisfies Record<string, CodeEntry>;

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

/** A failure as the consumers act on it: what to do, the code its records and metrics carry, and why. */
export interface Failure {
  action: FailureAction;
  code: ErrorCode;
  kind: FailureKind;
}

/**
 * The one classifier. Total: a `ReflectorError` is what its code's table entry says; anything
 * else is a bug (`INTERNAL`, crash), since adapters name every failure of theirs.
 */
export function failureOf(err: unknown): Failure {
  const code: ErrorCode = err instanceof ReflectorError ? err.code : "INTERNAL";
  const { action, kind } = errorCodes[code];
  return { action, code, kind };
}

/** The action alone, for callers that only choose between retrying, refusing and failing. */
export function classifyFailure(err: unknown): FailureAction {
  return failureOf(err).action;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
