import type { ErrorCode, Failure } from "../../domain/errors.js";

/**
 * What the consumer does after one failed attempt at an event, from the failure as classified
 * once (`failureOf`). Total: every failure, attempt number and source topic maps to one step.
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
export type FailureCode = ErrorCode;

export type FailureStep =
  | { step: "pause"; delayMs: number; code: FailureCode }
  | { step: "backoff"; delayMs: number; code: FailureCode }
  | { step: "hold"; delayMs: number; code: FailureCode }
  | { step: "retry-topic"; code: FailureCode }
  | { step: "dead-letter"; code: FailureCode }
  | { step: "crash"; code: FailureCode };

export interface BackoffConfig {
  baseMs: number;
  maxMs: number;
}

export interface FailurePolicyConfig extends BackoffConfig {
  maxAttempts: number;
}

/** The longest any consumer waits between two tries of the same work. */
export const maxBackoffMs = 30_000;

/**
 * The one back-off of every consumer (the task runner's retries, pauses and holds, and the simple
 * consumers' outage retries): exponential from `baseMs`, capped at `maxMs`, with jitter, uniform
 * in [base/2, min(max, base·2^(attempt-1))].
 */
export function backoffMs(
  attempt: number,
  config: BackoffConfig,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(config.maxMs, config.baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 30));
  const floor = Math.min(ceiling, config.baseMs / 2);
  return Math.round(floor + (ceiling - floor) * random());
}

/**
 * @param attempt the attempt of this kind that just failed, from 1 (outage retries and holds are
 *   counted apart from the event's own attempts)
 * @param fromRetryTopic the event was read from the retry topic (its last round)
 */
export function nextStep(
  failure: Failure,
  attempt: number,
  fromRetryTopic: boolean,
  config: FailurePolicyConfig,
  random: () => number = Math.random,
): FailureStep {
  const { code } = failure;
  switch (failure.kind) {
    case "fatal":
      return { step: "crash", code };
    case "rejected":
      return { step: "dead-letter", code };
    case "hold":
      return { step: "hold", delayMs: backoffMs(attempt, config, random), code };
    case "outage":
      return { step: "pause", delayMs: backoffMs(attempt, config, random), code };
    case "transient":
      if (attempt < config.maxAttempts)
        return { step: "backoff", delayMs: backoffMs(attempt, config, random), code };
      return fromRetryTopic
        ? { step: "dead-letter", code: "RETRIES_EXHAUSTED" }
        : { step: "retry-topic", code };
  }
}
