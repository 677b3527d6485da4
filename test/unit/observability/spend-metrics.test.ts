import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  boundedTenantLabel,
  createSpendMetrics,
  otherTenantsLabel,
} from "../../../src/observability/spend-metrics.js";

describe("spend metrics", () => {
  it("gives the first N tenants their own label and the rest one shared label", () => {
    const label = boundedTenantLabel(2);
    expect(label("a")).toBe("a");
    expect(label("b")).toBe("b");
    expect(label("c")).toBe(otherTenantsLabel);
    expect(label("a")).toBe("a");
    expect(label("d")).toBe(otherTenantsLabel);
  });

  it("keeps the series bounded however many tenants spend, and reads the slots at scrape time", async () => {
    const registry = new Registry();
    const metrics = createSpendMetrics(registry, { maxTenants: 3 });
    const slots = { inUse: 0, waiting: 0, size: 4 };
    metrics.observeSlots(slots);
    for (let i = 0; i < 1_000; i += 1) {
      metrics.tokens(`tenant-${String(i)}`, 10);
      metrics.overBudget(`tenant-${String(i)}`, "heuristic");
    }
    slots.inUse = 3;
    slots.waiting = 7;
    const text = await registry.metrics();
    const tokenSeries = text.split("\n").filter((l) => l.startsWith("reflector_llm_tenant_tokens_total{"));
    expect(tokenSeries).toEqual([
      'reflector_llm_tenant_tokens_total{tenant="tenant-0"} 10',
      'reflector_llm_tenant_tokens_total{tenant="tenant-1"} 10',
      'reflector_llm_tenant_tokens_total{tenant="tenant-2"} 10',
      'reflector_llm_tenant_tokens_total{tenant="_other"} 9970',
    ]);
    expect(text).toContain('reflector_llm_over_budget_total{tenant="_other",action="heuristic"} 997');
    expect(text).toContain("reflector_llm_calls_in_flight 3");
    expect(text).toContain("reflector_llm_calls_waiting 7");
    expect(text).toContain("reflector_llm_max_concurrent_calls 4");
  });
});
