import type { Redis } from "ioredis";
import { RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";
import { errorMessage, ReflectorError } from "../../domain/errors.js";
import type { SpendGate } from "../../pipeline/ports.js";

export type OverBudget = "wait" | "heuristic";

/** What the budget reports; `createSpendMetrics` implements it. */
export interface SpendObserver {
  /** Tokens counted against a tenant's budget. */
  tokens(tenantId: string, tokens: number): void;
  /** A tenant's work found the budget spent, and what happened to it. */
  overBudget(tenantId: string, action: OverBudget): void;
  /** The window's count could not be read or written (Redis). */
  error(operation: "read" | "write"): void;
}

/**
 * The per-tenant token count of the current window. rate-limiter-flexible keeps it: a fixed
 * window per key (the first tokens of a window set its expiry), `points` the budget. Its Redis
 * store increments and sets the expiry in one Lua script, so every pod adds to the same count.
 */
export type TokenCounter = Pick<RateLimiterAbstract, "get" | "penalty" | "points"> &
  Partial<Pick<RateLimiterAbstract, "reward" | "consume">>;

export interface TenantBudgetOptions {
  counter: TokenCounter;
  overBudget: OverBudget;
  observer?: SpendObserver;
}

/**
 * The spend gate over a token counter. A tenant is over budget once its window's count reaches
 * the budget; work already admitted finishes and is counted, so a window can end above the budget
 * by what the tenant's in-flight requests report (at most `LLM_MAX_CONCURRENT_CALLS` per pod, each
 * bounded by `LLM_PROMPT_MAX_TOKENS` + `LLM_MAX_OUTPUT_TOKENS`): bounded, never open-ended.
 */
export function createTenantBudget(options: TenantBudgetOptions): SpendGate {
  const { counter, overBudget, observer } = options;
  return {
    async admit(tenantId) {
      let used = 0;
      let resetInMs = 0;
      try {
        const window = await counter.get(tenantId);
        used = window?.consumedPoints ?? 0;
        resetInMs = window?.msBeforeNext ?? 0;
      } catch (err) {
        observer?.error("read");
        // Redis down: the event waits like any other Redis outage rather than spending unchecked.
        throw new ReflectorError("INDEX_UNAVAILABLE", `LLM token budget unreadable: ${errorMessage(err)}`, {
          cause: err,
        });
      }
      if (used < counter.points) return "model";
      observer?.overBudget(tenantId, overBudget);
      if (overBudget === "heuristic") return "offline";
      throw new ReflectorError(
        "LLM_BUDGET_EXHAUSTED",
        `tenant ${JSON.stringify(tenantId)} used ${String(used)} of its ${String(counter.points)} LLM tokens this window; it resets in ${String(Math.max(0, Math.round(resetInMs)))} ms`,
      );
    },

    async record(tenantId, tokens) {
      if (!Number.isInteger(tokens) || tokens <= 0) return;
      observer?.tokens(tenantId, tokens);
      try {
        await counter.penalty(tenantId, tokens);
      } catch {
        // The tokens are spent whatever Redis says; failing the event now would only spend them
        // again. The count is short by this request, which the error metric shows.
        observer?.error("write");
      }
    },

    async reserve(tenantId, tokens) {
      if (!Number.isInteger(tokens) || tokens <= 0) return true;
      if (!counter.consume) return (await this.admit(tenantId).catch(() => "offline")) === "model";
      try {
        // One atomic increment: it fails when the window's count would pass the budget, and the
        // refused tokens are given back, so concurrent reservations never add up past it.
        await counter.consume(tenantId, tokens);
      } catch (err) {
        if (err instanceof Error) {
          observer?.error("read");
          return false;
        }
        await counter.reward?.(tenantId, tokens).catch(() => undefined);
        observer?.overBudget(tenantId, overBudget);
        return false;
      }
      observer?.tokens(tenantId, tokens);
      return true;
    },

    async release(tenantId, tokens) {
      if (!Number.isInteger(tokens) || tokens <= 0) return;
      try {
        await counter.reward?.(tenantId, tokens);
      } catch {
        observer?.error("write");
      }
    },
  };
}

export interface RedisTenantBudgetOptions {
  keyPrefix: string;
  budgetTokens: number;
  /** Whole seconds (the Redis store's expiry is in seconds). */
  windowMs: number;
  overBudget: OverBudget;
  observer?: SpendObserver;
}

/** The budget shared by every pod of the processor: the window's count lives in Redis. */
export function createRedisTenantBudget(redis: Redis, options: RedisTenantBudgetOptions): SpendGate {
  const counter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${options.keyPrefix}:llm-budget`,
    points: options.budgetTokens,
    duration: Math.max(1, Math.round(options.windowMs / 1000)),
  });
  return createTenantBudget({
    counter,
    overBudget: options.overBudget,
    ...(options.observer ? { observer: options.observer } : {}),
  });
}
