import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { ReflectorError, type ErrorCode } from "../../domain/errors.js";

/**
 * The one classifier of LLM failures. Every SDK error (and our own invalid-output error) maps to
 * one code and a `retryable` flag; the retry loop, the metrics and the consumer all read it.
 */
export type RetryableLlmErrorCode = "connection" | "timeout" | "rate_limited" | "conflict" | "server_error";
export type FinalLlmErrorCode =
  | "bad_request"
  | "auth"
  | "permission"
  | "not_found"
  | "unprocessable"
  | "invalid_output"
  | "aborted"
  | "circuit_open"
  | "unknown";
export type LlmErrorCode = RetryableLlmErrorCode | FinalLlmErrorCode;

export type LlmFailure =
  { code: RetryableLlmErrorCode; retryable: true } | { code: FinalLlmErrorCode; retryable: false };

/** The model answered, but not with something we can use (for a reflection: after the repair). */
export class LlmOutputError extends Error {
  override readonly name = "LlmOutputError";
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super(message);
  }
}

/** The circuit breaker refused the request: no HTTP request was made. */
export class CircuitOpenError extends Error {
  override readonly name = "CircuitOpenError";
}

/** A final LLM failure as the one Reflector error type, remembering the classifier's code. */
export class LlmFailureError extends ReflectorError {
  constructor(
    readonly failure: LlmFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(reflectorCodeFor(failure), message, options);
  }
}

const retryable = (code: RetryableLlmErrorCode): LlmFailure => ({ code, retryable: true });
const final = (code: FinalLlmErrorCode): LlmFailure => ({ code, retryable: false });

/** Total: every thrown value gets a code. */
export function classifyLlmError(err: unknown): LlmFailure {
  if (err instanceof LlmFailureError) return err.failure;
  if (err instanceof LlmOutputError) return final("invalid_output");
  // Final for the request's own retry loop: retrying into an open circuit only spins. The consumer
  // still treats it as an outage (LLM_CIRCUIT_OPEN) and holds the event.
  if (err instanceof CircuitOpenError) return final("circuit_open");
  // Order matters: the timeout and abort errors are subclasses of the connection error.
  if (err instanceof APIUserAbortError) return final("aborted");
  if (err instanceof APIConnectionTimeoutError) return retryable("timeout");
  if (err instanceof APIConnectionError) return retryable("connection");
  if (err instanceof APIError) {
    const status: unknown = err.status;
    if (typeof status !== "number") return final("unknown");
    if (status === 408) return retryable("timeout");
    if (status === 409) return retryable("conflict");
    if (status === 429) return retryable("rate_limited");
    if (status >= 500) return retryable("server_error");
    if (status === 400) return final("bad_request");
    if (status === 401) return final("auth");
    if (status === 403) return final("permission");
    if (status === 404) return final("not_found");
    if (status === 422) return final("unprocessable");
    return final("unknown");
  }
  if (err instanceof Error && err.name === "AbortError") return final("aborted");
  return final("unknown");
}

/**
 * How long the server asked us to wait (`retry-after-ms`, or `Retry-After` in seconds or as an
 * HTTP date), bounded by `capMs`; null when it did not say.
 */
export function retryAfterMs(err: unknown, capMs: number, now: Date = new Date()): number | null {
  if (!(err instanceof APIError) || !(err.headers instanceof Headers)) return null;
  const precise = err.headers.get("retry-after-ms");
  const coarse = err.headers.get("retry-after");
  let ms: number | null = null;
  if (precise !== null && precise.trim() !== "" && Number.isFinite(Number(precise))) {
    ms = Number(precise);
  } else if (coarse !== null && coarse.trim() !== "") {
    const seconds = Number(coarse);
    if (Number.isFinite(seconds)) ms = seconds * 1000;
    else {
      const at = Date.parse(coarse);
      if (!Number.isNaN(at)) ms = at - now.getTime();
    }
  }
  if (ms === null || ms < 0) return null;
  return Math.min(ms, capMs);
}

/**
 * The Reflector code of a final LLM failure. Outages (network, timeouts, rate limits, 5xx) and a
 * misconfigured endpoint (401/403/404) are not the event's fault: the consumer retries them
 * without spending the event's budget. A request the endpoint refuses (400/422), or output that
 * stays invalid after repair, spends the budget and is then dead-lettered.
 */
export function reflectorCodeFor(failure: LlmFailure): ErrorCode {
  if (failure.retryable) return "LLM_UNAVAILABLE";
  switch (failure.code) {
    case "auth":
    case "permission":
    case "not_found":
      return "LLM_MISCONFIGURED";
    case "invalid_output":
      return "LLM_OUTPUT_INVALID";
    case "aborted":
      return "LLM_UNAVAILABLE";
    case "circuit_open":
      return "LLM_CIRCUIT_OPEN";
    default:
      return "GENERATOR_FAILED";
  }
}

export function toReflectorError(err: unknown, what: string): LlmFailureError {
  if (err instanceof LlmFailureError) return err;
  const failure = classifyLlmError(err);
  const message = err instanceof Error ? err.message : String(err);
  return new LlmFailureError(failure, `${what} (${failure.code}): ${message}`, { cause: err });
}

/**
 * For a circuit breaker: true when the LLM endpoint itself is unusable (outage, rate limiting,
 * credentials or model misconfigured), as opposed to one bad request or one bad answer.
 */
export function isLlmUnavailable(err: unknown): boolean {
  if (err instanceof ReflectorError)
    return (
      err.code === "LLM_UNAVAILABLE" || err.code === "LLM_MISCONFIGURED" || err.code === "LLM_CIRCUIT_OPEN"
    );
  const failure = classifyLlmError(err);
  return (
    failure.retryable ||
    failure.code === "auth" ||
    failure.code === "permission" ||
    failure.code === "not_found" ||
    failure.code === "circuit_open"
  );
}
