import { Counter, Gauge, type Registry } from "prom-client";

/** The label of tenants past the first `maxTenants` seen. */
export const otherTenantsLabel = "_other";

/**
 * A bounded `tenant` label: the first `maxTenants` tenants this process sees keep their own, the
 * rest share `_other`, so a platform with ten thousand tenants cannot blow up the series count.
 */
export function boundedTenantLabel(maxTenants: number): (tenantId: string) => string {
  const named = new Set<string>();
  return (tenantId) => {
    if (named.has(tenantId)) return tenantId;
    if (named.size >= maxTenants) return otherTenantsLabel;
    named.add(tenantId);
    return tenantId;
  };
}

export interface SpendMetricsOptions {
  maxTenants: number;
}

/** The process's LLM slots (`LLM_MAX_CONCURRENT_CALLS`), read at scrape time. */
export interface SlotsView {
  readonly inUse: number;
  readonly waiting: number;
  readonly size: number;
}

/** LLM spend per tenant and the concurrency cap, on the app's registry. */
export function createSpendMetrics(registry: Registry, options: SpendMetricsOptions) {
  const label = boundedTenantLabel(options.maxTenants);
  const tokens = new Counter({
    name: "reflector_llm_tenant_tokens_total",
    help: "LLM tokens (prompt + completion, as the endpoint reported) counted against each tenant's budget; tenants past LLM_METRICS_MAX_TENANTS are _other.",
    labelNames: ["tenant"] as const,
    registers: [registry],
  });
  const overBudget = new Counter({
    name: "reflector_llm_over_budget_total",
    help: "Work of a tenant that found its LLM token budget spent, by what happened (heuristic: the offline generator stood in; wait: the event was held).",
    labelNames: ["tenant", "action"] as const,
    registers: [registry],
  });
  const budgetErrors = new Counter({
    name: "reflector_llm_budget_errors_total",
    help: "Reads (the event waits) and writes (the tokens go uncounted) of the LLM token budget in Redis that failed.",
    labelNames: ["operation"] as const,
    registers: [registry],
  });
  function observeSlots(slots: SlotsView): void {
    new Gauge({
      name: "reflector_llm_calls_in_flight",
      help: "LLM requests in flight in this process (at most LLM_MAX_CONCURRENT_CALLS).",
      registers: [registry],
      collect() {
        this.set(slots.inUse);
      },
    });
    new Gauge({
      name: "reflector_llm_calls_waiting",
      help: "LLM requests waiting for one of this process's LLM_MAX_CONCURRENT_CALLS slots.",
      registers: [registry],
      collect() {
        this.set(slots.waiting);
      },
    });
    new Gauge({
      name: "reflector_llm_max_concurrent_calls",
      help: "LLM_MAX_CONCURRENT_CALLS of this process.",
      registers: [registry],
    }).set(slots.size);
  }
  budgetErrors.inc({ operation: "read" }, 0);
  budgetErrors.inc({ operation: "write" }, 0);

  return {
    observeSlots,
    tokens(tenantId: string, count: number): void {
      tokens.inc({ tenant: label(tenantId) }, count);
    },
    overBudget(tenantId: string, action: "wait" | "heuristic"): void {
      overBudget.inc({ tenant: label(tenantId), action });
    },
    error(operation: "read" | "write"): void {
      budgetErrors.inc({ operation });
    },
  };
}

export type SpendMetrics = ReturnType<typeof createSpendMetrics>;
