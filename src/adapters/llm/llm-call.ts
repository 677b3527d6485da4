import { setTimeout as sleep } from "node:timers/promises";
import pRetry from "p-retry";
import type { CircuitBreaker, LlmCallOutcome } from "./circuit-breaker.js";
import type { FairSlots } from "./fair-slots.js";
import { inGenAiSpan, type GenAiAnswer, type GenAiRequest } from "./gen-ai-span.js";

export type { LlmCallOutcome } from "./circuit-breaker.js";
import { CircuitOpenError, classifyLlmError, retryAfterMs, toReflectorError } from "./llm-errors.js";

/** What the LLM adapters report; `createLlmMetrics` implements it, tests may record it. */
export interface LlmObserver {
  request(record: {
    model: string;
    outcome: "success" | "invalid_output" | "error";
    durationSeconds: number;
    promptTokens: number;
    completionTokens: number;
  }): void;
  error(code: string): void;
  /**
   * Prompt size of one generation request: `estimate` before it is sent, `reported` as the
   * endpoint counted it (`usage.prompt_tokens`), when it does.
   */
  promptTokens?(record: { model: string; source: "estimate" | "reported"; tokens: number }): void;
}

export interface LlmCallPolicy {
  /** Deadline of one HTTP request. */
  timeoutMs: number;
  /** Retries after the first request, for retryable failures only. */
  maxRetries: number;
  /** First backoff; doubles per retry with jitter (×1–2), up to `retryMaxDelayMs`. */
  retryBaseMs?: number;
  retryMaxDelayMs?: number;
  /** Upper bound on how long a `Retry-After` header may make us wait. */
  retryAfterCapMs?: number;
  observer?: LlmObserver;
  /** For a circuit breaker: called after every HTTP request with how it went. */
  onOutcome?: (outcome: LlmCallOutcome) => void;
  /** Shared by every call to the endpoint; a request it refuses fails with `LLM_CIRCUIT_OPEN`. */
  breaker?: CircuitBreaker;
  /** `LLM_MAX_CONCURRENT_CALLS`: every HTTP request holds one slot, handed out in turn by tenant. */
  slots?: FairSlots;
  /**
   * Counts a tenant's tokens against its budget: the request's estimate is reserved before it is
   * sent, so concurrent work sees it; then the reported usage replaces it (the estimate stays
   * when the endpoint omits `usage`); a failed request gives its reservation back.
   */
  spend?: {
    record(tenantId: string, tokens: number): Promise<void>;
    release?(tenantId: string, tokens: number): Promise<void>;
  };
  /**
   * Ends the call when the caller gives up on it (set per call): a request waiting for a slot leaves
   * the queue, one in flight is cancelled, and no retry follows.
   */
  signal?: AbortSignal;
  /**
   * Whose work the call is (set per call): its requests queue for a slot in the tenant's turn and
   * their tokens count against its budget. Unset for work of no tenant.
   */
  tenantId?: string;
}

export interface LlmResponse<T> {
  value: T;
  promptTokens: number;
  completionTokens: number;
  /** The endpoint answered, but the content was unusable (counted, not retried here). */
  invalidOutput?: boolean;
  /** The endpoint's answer had no `usage`: the tokens counted are the estimates. */
  usageMissing?: boolean;
  /** The answer's tokens by `estimateTokens`, counted when `usage` is missing. */
  estimatedCompletionTokens?: number;
  /** What the answer says of itself (model, id, finish reasons), for its GenAI span. */
  genAi?: GenAiAnswer;
}

/**
 * One LLM request under the one retry policy: the SDK's own retries are off (the caller passes
 * `maxRetries: 0`), p-retry retries only what the classifier calls retryable, with jittered
 * exponential backoff, and waits at least as long as a bounded `Retry-After` asks. A final
 * failure is a `ReflectorError` whose code tells the consumer whether this is an outage. Each
 * HTTP request is one GenAI client span (gen-ai-span.ts) described by `genAi`.
 */
export async function callLlm<T>(
  policy: LlmCallPolicy,
  model: string,
  what: string,
  request: (options: { timeout: number; maxRetries: 0; signal?: AbortSignal }) => Promise<LlmResponse<T>>,
  /** The request's estimated prompt tokens, reserved against the tenant's budget before it is sent. */
  estimatedPromptTokens = 0,
  genAi: GenAiRequest = { operation: "chat" },
): Promise<T> {
  const { tenantId } = policy;
  const spend = tenantId !== undefined ? policy.spend : undefined;
  const capMs = policy.retryAfterCapMs ?? 30_000;
  try {
    return await pRetry(
      async () => {
        // The slot first: a request given up while it waits for one (the signal) must not have
        // taken the half-open circuit's one probe.
        const release = policy.slots ? await policy.slots.acquire(tenantId ?? "", policy.signal) : null;
        if (policy.breaker && !policy.breaker.tryAcquire()) {
          release?.();
          policy.observer?.error("circuit_open");
          throw new CircuitOpenError(`${what}: the LLM circuit breaker is open`);
        }
        const started = performance.now();
        const reserved = spend && tenantId !== undefined ? Math.max(0, Math.ceil(estimatedPromptTokens)) : 0;
        if (reserved > 0 && spend && tenantId !== undefined) await spend.record(tenantId, reserved);
        let settled = false;
        try {
          const response = await inGenAiSpan(genAi, model, () =>
            request({
              timeout: policy.timeoutMs,
              maxRetries: 0,
              ...(policy.signal ? { signal: policy.signal } : {}),
            }),
          );
          settled = true;
          if (spend && tenantId !== undefined) {
            const reported = response.promptTokens + response.completionTokens;
            const spent =
              response.usageMissing || reported === 0
                ? reserved + (response.estimatedCompletionTokens ?? 0)
                : reported;
            if (spent > reserved) await spend.record(tenantId, spent - reserved);
            else if (spent < reserved) await spend.release?.(tenantId, reserved - spent);
          }
          policy.observer?.request({
            model,
            outcome: response.invalidOutput ? "invalid_output" : "success",
            durationSeconds: (performance.now() - started) / 1000,
            promptTokens: response.promptTokens,
            completionTokens: response.completionTokens,
          });
          if (response.invalidOutput) policy.observer?.error("invalid_output");
          policy.breaker?.record(response.invalidOutput ? "invalidOutput" : "ok");
          policy.onOutcome?.("ok");
          return response.value;
        } catch (err) {
          const failure = classifyLlmError(err);
          policy.observer?.request({
            model,
            outcome: "error",
            durationSeconds: (performance.now() - started) / 1000,
            promptTokens: 0,
            completionTokens: 0,
          });
          policy.observer?.error(failure.code);
          const outcome = failure.retryable ? "retryableFailure" : "failure";
          policy.breaker?.record(failure.code === "invalid_output" ? "invalidOutput" : outcome);
          policy.onOutcome?.(outcome);
          throw err;
        } finally {
          release?.();
          if (!settled && reserved > 0 && spend && tenantId !== undefined)
            await spend.release?.(tenantId, reserved).catch(() => undefined);
        }
      },
      {
        retries: policy.maxRetries,
        minTimeout: policy.retryBaseMs ?? 500,
        maxTimeout: policy.retryMaxDelayMs ?? 20_000,
        factor: 2,
        randomize: true,
        shouldRetry: ({ error }) => !policy.signal?.aborted && classifyLlmError(error).retryable,
        onFailedAttempt: async ({ error, retriesLeft }) => {
          if (retriesLeft <= 0 || !classifyLlmError(error).retryable) return;
          const waitMs = retryAfterMs(error, capMs);
          // p-retry adds its own jittered backoff after this, so the total is at least Retry-After.
          if (waitMs !== null && waitMs > 0) await sleep(waitMs);
        },
      },
    );
  } catch (err) {
    throw toReflectorError(err, what);
  }
}
