import type { Registry } from "prom-client";
import { createRedisTenantBudget } from "../adapters/redis/tenant-token-budget.js";
import { buildLlm, type buildRedis, type Llm } from "./builders.js";
import type { Config } from "../config/config.js";
import type { Logger } from "../observability/logger.js";
import { createLlmMetrics, type LlmMetrics } from "../observability/llm-metrics.js";
import { createSpendMetrics } from "../observability/spend-metrics.js";
import type { SpendGate } from "../pipeline/ports.js";
import { lessonCheckWithinBudget } from "../pipeline/lesson-check.js";

export interface SpendLimitedLlm {
  llm: Llm;
  llmMetrics: LlmMetrics;
  /** The per-tenant token budget shared by every pod (in Redis); null when none is set. */
  budget: SpendGate | null;
}

/** The LLM adapters with their metrics, the circuit's log lines and, when set, the tenants' token budget. */
export function buildSpendLimitedLlm(
  config: Config,
  deps: { redis: ReturnType<typeof buildRedis>; registry: Registry; logger: Logger },
): SpendLimitedLlm {
  const { logger } = deps;
  const llmMetrics = createLlmMetrics(deps.registry, {
    inputPerMillionUsd: config.openai.inputPricePerMTokUsd,
    outputPerMillionUsd: config.openai.outputPricePerMTokUsd,
  });
  const spendMetrics = createSpendMetrics(deps.registry, { maxTenants: config.spend.metricsMaxTenants });
  const budget =
    config.spend.tenantTokenBudget === null
      ? null
      : createRedisTenantBudget(deps.redis, {
          keyPrefix: config.redis.keyPrefix,
          budgetTokens: config.spend.tenantTokenBudget,
          windowMs: config.spend.budgetWindowMs,
          overBudget: config.spend.overBudget,
          observer: spendMetrics,
        });
  const llm = buildLlm(config, {
    ...(budget ? { spend: budget } : {}),
    observer: llmMetrics,
    onCircuitChange: ({ state, openForMs }) => {
      llmMetrics.setCircuitOpen(state !== "closed");
      if (state === "open") logger.warn({ state }, "llm circuit opened");
      else logger.warn({ state, openForMs }, `llm circuit ${state}`);
    },
  });
  spendMetrics.observeSlots(llm.slots);
  const lessonCheck =
    llm.lessonCheck && budget ? lessonCheckWithinBudget(llm.lessonCheck, budget) : llm.lessonCheck;
  return { llm: { ...llm, lessonCheck }, llmMetrics, budget };
}
