import { classifyFailure, isOutage, ReflectorError, type ErrorCode } from "../domain/errors.js";

/**
 * What the consumer does after one failed attempt at an event. Total: every thrown value, attempt
 * number and source topic maps to exactly one step.
 * - `pause`: a dependency is down; stop fetching, retry the same event after `delayMs` without
 *   spending its attempts, commit nothing past it.
 * - `backoff`: retry in process after `delayMs` (jittered exponential).
 * - `hold`: the tenant is over its LLM token budget (`LLM_OVER_BUDGET=wait`); retry the same event
 *   after `delayMs` without spending its attempts, but keep fetching: one tenant's spent budget is
 *   not an outage, and the other tenants' events go on.
 * - `retry-topic`: the in-process attempts are spent; hand the event to the retry topic.
 * - `dead-letter`: the event is bad, or it already went through the retry topic.
 * - `crash`: a bug; stop the process, restart from the committed offset.
 */
export type FailureCode = ErrorCode | "TRANSPORT";

export type FailureStep =
  | { step: "pause"; delayMs: number; code: FailureCode }
  | { step: "backoff"; delayMs: number; code: FailureCode }
  | { step: "hold"; delayMs: number; code: FailureCode }
  | { step: "retry-topic"; code: FailureCode }
  | { step: "dead-letter"; code: FailureCode }
  | { step: "crash"; code: FailureCode };

export interface FailurePolicyConfig {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

/** The error code for metrics and dead-letter headers; untyped transport errors are `TRANSPORT`. */
export function codeOf(err: unknown): ErrorCode | "TRANSPORT" {
  if (err instanceof ReflectorError) return err.code;
  return classifyFailure(err) === "retry" ? "TRANSPORT" : "INTERNAL";
}

/** True when the failure holds the event without closing the outage gate (a tenant over budget). */
export function isHeld(err: unknown): boolean {
  return err instanceof ReflectorError && err.code === "LLM_BUDGET_EXHAUSTED";
}

/** Full jitter: uniform in [base/2, min(max, base·2^(attempt-1))]. */
export function backoffMs(
  attempt: number,
  config: Pick<FailurePolicyConfig, "baseMs" | "maxMs">,
  random: () => number,
): number {
  const ceiling = Math.min(config.maxMs, config.baseMs * 2 ** Math.max(0, attempt - 1));
  const floor = Math.min(ceiling, config.baseMs / 2);
  return Math.round(floor + (ceiling - floor) * random());
}

/**
 * @param attempt the attempt that just failed, from 1 (outage retries and holds are counted apart)
 * @param fromRetryTopic the event was read from the retry topic (its last round)
 */
export function nextStep(
  err: unknown,
  attempt: number,
  fromRetryTopic: boolean,
  config: FailurePolicyConfig,
  random: () => number = Math.random,
): FailureStep {
  const action = classifyFailure(err);
  const code = codeOf(err);
  if (action === "crash") return { step: "crash", code };
  if (action === "dead-letter") return { step: "dead-letter", code };
  if (isHeld(err)) return { step: "hold", delayMs: backoffMs(attempt, config, random), code };
  if (isOutage(err)) return { step: "pause", delayMs: backoffMs(attempt, config, random), code };
  if (attempt < config.maxAttempts)
    return { step: "backoff", delayMs: backoffMs(attempt, config, random), code };
  return fromRetryTopic ? { step: "dead-letter", code: "RETRIES_EXHAUSTED" } : { step: "retry-topic", code };
}
