import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("spend limits and tenant binding settings", () => {
  it("defaults: 16 concurrent calls, no budget, heuristic when over one, no binding", () => {
    const config = loadConfig({});
    expect(config.spend).toEqual({
      maxConcurrentCalls: 16,
      tenantTokenBudget: null,
      budgetWindowMs: 3_600_000,
      overBudget: "heuristic",
      metricsMaxTenants: 50,
    });
    expect(config.tenancy).toEqual({ binding: null, topicRefreshMs: 60_000, newLessonsPerMinute: 120 });
  });

  it("reads a budget, a window in whole seconds and the wait mode", () => {
    const config = loadConfig({
      LLM_TENANT_TOKEN_BUDGET: "200000",
      LLM_TENANT_BUDGET_WINDOW_MS: "60000",
      LLM_OVER_BUDGET: "wait",
      LLM_MAX_CONCURRENT_CALLS: "4",
    });
    expect(config.spend).toMatchObject({
      tenantTokenBudget: 200_000,
      budgetWindowMs: 60_000,
      overBudget: "wait",
      maxConcurrentCalls: 4,
    });
  });

  it("parses the binding into exact topics and prefixes", () => {
    const config = loadConfig({
      TENANT_TOPIC_BINDING: "acme=agents.acme.*, globex=agents.globex.task.completed",
    });
    expect(config.tenancy.binding).toEqual([
      { tenantId: "acme", topic: "agents.acme.", prefix: true },
      { tenantId: "globex", topic: "agents.globex.task.completed", prefix: false },
    ]);
  });

  it("lists every problem: a window that is not whole seconds, a bad mode, a malformed or ambiguous binding", () => {
    const problems = problemsOf({
      LLM_TENANT_BUDGET_WINDOW_MS: "1500",
      LLM_OVER_BUDGET: "block",
      LLM_MAX_CONCURRENT_CALLS: "0",
      TENANT_TOPIC_BINDING: "acme=agents.*,globex=agents.globex.*,nobody,x=bad topic",
    });
    expect(problems.some((p) => p.startsWith("LLM_TENANT_BUDGET_WINDOW_MS"))).toBe(true);
    expect(problems.some((p) => p.startsWith("LLM_OVER_BUDGET"))).toBe(true);
    expect(problems.some((p) => p.startsWith("LLM_MAX_CONCURRENT_CALLS"))).toBe(true);
    const binding = problems.find((p) => p.startsWith("TENANT_TOPIC_BINDING")) ?? "";
    expect(binding).toContain('"nobody" is not tenant=topic');
    expect(binding).toContain('"bad topic"');
    expect(binding).toContain("acme=agents.* and globex=agents.globex.* can both match one topic");
  });

  it("refuses a binding that covers Reflector's own topics (it would read its own dead letters)", () => {
    const problems = problemsOf({ TENANT_TOPIC_BINDING: "acme=agent.*" });
    expect(problems).toContain(
      "TENANT_TOPIC_BINDING: acme=agent.* covers agent.task.completed.dlq, one of Reflector's own topics",
    );
    expect(problemsOf({ TENANT_TOPIC_BINDING: "acme=agent.task.completed" })).toEqual([]);
  });

  it("binds OTLP traces like task events: the bridge publishes to one tenant's topic, and its traces are that tenant's", () => {
    const binding = "acme=agents.acme.tasks,globex=agents.globex.*";
    expect(problemsOf({ TENANT_TOPIC_BINDING: binding, OTLP_TOPIC: "otlp.acme" })).toEqual([
      "OTLP_TASK_TOPIC: under TENANT_TOPIC_BINDING the bridge publishes to a topic bound to one tenant; agent.task.completed is bound to none",
    ]);
    const config = loadConfig({
      TENANT_TOPIC_BINDING: binding,
      OTLP_TOPIC: "otlp.acme",
      OTLP_TASK_TOPIC: "agents.acme.tasks",
    });
    expect(config.otlp).toMatchObject({ taskTopic: "agents.acme.tasks", boundTenant: "acme" });
    // The OTLP topic itself may not be bound: the processor would read spans as task events.
    expect(
      problemsOf({
        TENANT_TOPIC_BINDING: binding,
        OTLP_TOPIC: "agents.globex.otlp",
        OTLP_TASK_TOPIC: "agents.acme.tasks",
      }),
    ).toEqual([expect.stringMatching(/covers agents\.globex\.otlp, one of Reflector's own topics/)]);
    // Without a binding the resource names the tenant, as before.
    expect(loadConfig({ OTLP_TOPIC: "otlp" }).otlp).toMatchObject({
      taskTopic: "agent.task.completed",
      boundTenant: undefined,
      maxSpansPerTrace: 20_000,
      maxTraceBytes: 64 * 1024 * 1024,
    });
  });
});
