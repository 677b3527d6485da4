import { z } from "zod";
import {
  matchesBinding,
  parseTenantTopicBinding,
  type TenantTopicBinding,
} from "../domain/tenant-topic-binding.js";

/**
 * The settings of the LLM spend limits and of the tenant trust model (tenants bound to input
 * topics): their environment variables, their part of `Config` and their checks. `config.ts`
 * spreads them into the one schema.
 */

export const spendAndTenancyEnv = {
  /** HTTP requests to the LLM endpoint in flight at once in one process, shared in turn by tenant. */
  LLM_MAX_CONCURRENT_CALLS: z.coerce.number().int().min(1).max(10_000).default(16),
  /** Tokens (prompt + completion, as reported) a tenant may spend per window; 0 = no budget. */
  LLM_TENANT_TOKEN_BUDGET: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  /** The budget's window, in whole seconds (the Redis count's expiry). */
  LLM_TENANT_BUDGET_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(31 * 24 * 3_600_000)
    .multipleOf(1_000, "must be whole seconds (a multiple of 1000)")
    .default(3_600_000),
  /** Over budget: `heuristic` = the offline generator and evaluator stand in; `wait` = the event is held. */
  LLM_OVER_BUDGET: z.enum(["heuristic", "wait"]).default("heuristic"),
  /** Tenants with their own label on the per-tenant LLM metrics; the rest are counted as `_other`. */
  LLM_METRICS_MAX_TENANTS: z.coerce.number().int().min(1).max(10_000).default(50),
  /** `tenant=topic` or `tenant=prefix*`, comma-separated; unset = any tenant on TOPIC_TASK_COMPLETED. */
  TENANT_TOPIC_BINDING: z.string().optional(),
  /** How often bound prefixes are matched against the cluster's topics again; 0 = only at start. */
  TENANT_TOPIC_REFRESH_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /**
   * New lessons one tenant may store a minute, counted in Redis across every pod; past it a new
   * reflection is still judged and published, but not stored (its outcome says why); 0 = no limit.
   */
  LESSONS_NEW_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(120),
};

export interface SpendAndTenancyConfig {
  /** LLM spend limits (docs/operations.md, "LLM spend limits"). */
  spend: {
    maxConcurrentCalls: number;
    /** Null: no per-tenant budget. */
    tenantTokenBudget: number | null;
    budgetWindowMs: number;
    overBudget: "heuristic" | "wait";
    metricsMaxTenants: number;
  };
  /** The tenant trust model (docs/operations.md, "Tenants and topics"); null = no binding. */
  tenancy: {
    binding: TenantTopicBinding | null;
    topicRefreshMs: number;
    /** LESSONS_NEW_PER_MINUTE: new lessons a tenant may store a minute; null = no limit. */
    newLessonsPerMinute: number | null;
  };
}

export type SpendAndTenancyEnv = z.infer<z.ZodObject<typeof spendAndTenancyEnv>>;

export function spendAndTenancyConfig(e: SpendAndTenancyEnv): SpendAndTenancyConfig {
  return {
    spend: {
      maxConcurrentCalls: e.LLM_MAX_CONCURRENT_CALLS,
      tenantTokenBudget: e.LLM_TENANT_TOKEN_BUDGET > 0 ? e.LLM_TENANT_TOKEN_BUDGET : null,
      budgetWindowMs: e.LLM_TENANT_BUDGET_WINDOW_MS,
      overBudget: e.LLM_OVER_BUDGET,
      metricsMaxTenants: e.LLM_METRICS_MAX_TENANTS,
    },
    tenancy: {
      binding: e.TENANT_TOPIC_BINDING ? parseTenantTopicBinding(e.TENANT_TOPIC_BINDING) : null,
      topicRefreshMs: e.TENANT_TOPIC_REFRESH_MS,
      newLessonsPerMinute: e.LESSONS_NEW_PER_MINUTE > 0 ? e.LESSONS_NEW_PER_MINUTE : null,
    },
  };
}

/**
 * A binding that does not parse, or that covers one of Reflector's own topics (outputs, DLQ,
 * retry, feedback): the processor would read its own dead letters as input.
 */
export function tenancyProblems(raw: string | undefined, ownTopics: string[] | null): string[] {
  if (!raw) return [];
  let binding: TenantTopicBinding;
  try {
    binding = parseTenantTopicBinding(raw);
  } catch (err) {
    return [`TENANT_TOPIC_BINDING: ${(err as Error).message}`];
  }
  if (binding.length === 0) return ["TENANT_TOPIC_BINDING: binds no topic"];
  return (ownTopics ?? []).flatMap((topic) =>
    binding
      .filter((b) => matchesBinding(b, topic))
      .map(
        (b) =>
          `TENANT_TOPIC_BINDING: ${b.tenantId}=${b.topic}${b.prefix ? "*" : ""} covers ${topic}, one of Reflector's own topics`,
      ),
  );
}
