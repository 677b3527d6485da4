import { describe, expect, it } from "vitest";
import { createOtlpDecoder } from "../../../../src/adapters/otlp/otlp-decoder.js";
import { TaskCompletedV1 } from "../../../../src/domain/contracts/index.js";
import {
  defaultMaxEventBytes,
  eventIdOfTrace,
  mapTraceToTask,
} from "../../../../src/domain/otlp/map-trace.js";
import type { OtlpSpan } from "../../../../src/domain/otlp/otlp-span.js";
import { findRoot, isRootCandidate } from "../../../../src/domain/otlp/trace-root.js";
import { runMultiAgentTask, sdkTracer, serialize } from "../../../support/otel-traces.js";

const decoder = createOtlpDecoder();
const mapping = {
  tenantAttribute: "reflector.tenant_id",
  projectAttribute: "reflector.project_id",
  defaultTenant: "default-tenant",
  defaultProject: "default-project",
};

function sdkRun(resource: Record<string, string>, conversationId?: string) {
  const sdk = sdkTracer(resource);
  const run = runMultiAgentTask(sdk.tracer, conversationId ? { conversationId } : {});
  return { run, spans: decoder.decode(serialize(sdk.finished(), "protobuf")).spans };
}

function mapped(spans: OtlpSpan[]) {
  const result = mapTraceToTask(spans, mapping);
  if (!result.ok) throw new Error(result.reason);
  return result.event;
}

const base: OtlpSpan = {
  traceId: "5b8efff798038103d269b633813fc60c",
  spanId: "0000000000000001",
  parentSpanId: null,
  parentIsRemote: null,
  name: "invoke_agent a",
  startTimeUnixNano: "1764000000000000000",
  endTimeUnixNano: "1764000001000000000",
  attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a" },
  events: [],
  status: { code: 0, message: "" },
  resource: {},
};

describe("mapTraceToTask", () => {
  it("maps the SDK's multi-agent run to one valid task event", () => {
    const { run, spans } = sdkRun(
      { "service.name": "churn-agents", "reflector.tenant_id": "acme" },
      "conv-7",
    );
    const event = mapped(spans);
    expect(TaskCompletedV1.safeParse(event).success).toBe(true);
    expect(event).toMatchObject({
      eventId: eventIdOfTrace(run.traceId),
      tenantId: "acme",
      projectId: "churn-agents",
      agentId: "orchestrator",
      loopId: "conv-7",
      sessionId: "conv-7",
      taskId: run.traceId,
      outcome: "failure",
      task: {
        description: "Which customers churned last quarter and why?",
        query: "Which customers churned last quarter and why?",
      },
      error: {
        // The first span to fail is the SQL tool, not the orchestrator it failed.
        category: "tool_error",
        type: "query_timeout",
        message: "Query execution exceeded 30s limit",
        context: { agent: "orchestrator", toolName: "postgres_query" },
      },
    });
    expect(event.occurredAt).toBe("2026-11-24T12:00:00.011Z");
    expect(event.events.map((e) => [e.type, e.actor, e.toolName])).toEqual([
      ["system_event", "orchestrator", undefined],
      ["llm_call", "orchestrator", undefined],
      ["system_event", "researcher", undefined],
      ["tool_call", "researcher", "web_search"],
      ["tool_response", "researcher", "web_search"],
      ["tool_call", "orchestrator", "postgres_query"],
      ["tool_response", "orchestrator", "postgres_query"],
      ["error_event", "orchestrator", undefined],
    ]);
    const [, llm, , call, response, , failedResponse, exception] = event.events;
    expect(llm?.metadata).toMatchObject({ model: "gpt-4o", inputTokens: 412, outputTokens: 96 });
    expect(call?.content).toBe('{"query":"churn drivers SaaS 2026"}');
    expect(call?.eventId).toMatch(/^[0-9a-f]{16}\.call$/);
    expect(call?.metadata).toBeUndefined();
    expect(response?.content).toBe("3 articles on pricing changes");
    expect(failedResponse?.error).toEqual({
      message: "Query execution exceeded 30s limit",
      code: "query_timeout",
    });
    expect(exception?.content).toBe("QueryTimeoutError: Query execution exceeded 30s limit");
  });

  it("is deterministic, and falls back to the trace id and the default tenant", () => {
    const { run, spans } = sdkRun({});
    const first = mapped(spans);
    expect(mapped([...spans].reverse())).toEqual(first);
    expect(first).toMatchObject({
      loopId: run.traceId,
      tenantId: "default-tenant",
      projectId: "default-project",
    });
    expect(first.sessionId).toBeUndefined();
  });

  it("reads the tenant from the configured resource attribute", () => {
    const { spans } = sdkRun({ "team.id": "blue", "reflector.tenant_id": "acme" });
    const result = mapTraceToTask(spans, { ...mapping, tenantAttribute: "team.id" });
    expect(result.ok && result.event.tenantId).toBe("blue");
  });

  it("cleans what the contract refuses: control characters in names, over-long ids", () => {
    const event = mapped([
      {
        ...base,
        attributes: {
          ...base.attributes,
          "gen_ai.agent.name": "plan\u001b[31mner\u0007",
          "gen_ai.conversation.id": "c".repeat(500),
        },
        resource: { "reflector.tenant_id": "\u0000acme\n" },
      },
    ]);
    expect(event.agentId).toBe("plan [31mner");
    expect(event.tenantId).toBe("acme");
    expect(event.loopId).toHaveLength(200);
  });

  it("keeps at most 2,000 steps and cuts long texts to a shared budget", () => {
    const children: OtlpSpan[] = Array.from({ length: 2_500 }, (_, i) => ({
      ...base,
      spanId: (i + 2).toString(16).padStart(16, "0"),
      parentSpanId: base.spanId,
      name: "execute_tool t",
      startTimeUnixNano: String(1764000000000000000n + BigInt(i + 1) * 1000n),
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "t",
        "gen_ai.tool.call.result": "x".repeat(50_000),
      },
    }));
    // 5,001 steps: the root's, then a call and a response per tool; 1,999 kept plus the note.
    const event = mapped([base, ...children]);
    expect(event.events).toHaveLength(2_000);
    expect(event.events.at(-1)?.content).toMatch(/^3002 more steps of this trace were left out/);
    expect(Math.max(...event.events.map((e) => e.content.length))).toBeLessThanOrEqual(500);
    expect(Buffer.byteLength(JSON.stringify(event))).toBeLessThan(1_000_000);
  });

  it("measures the event in encoded bytes: a CJK trace or 2,000 busy steps stay under the topic's limit", () => {
    const busy = (text: string): OtlpSpan[] =>
      Array.from({ length: 2_000 }, (_, i) => ({
        ...base,
        spanId: (i + 2).toString(16).padStart(16, "0"),
        parentSpanId: base.spanId,
        name: "execute_tool lookup_customer_records",
        startTimeUnixNano: String(1764000000000000000n + BigInt(i + 1) * 1000n),
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "lookup_customer_records",
          "gen_ai.request.model": "gpt-4o-2024-08-06",
          "gen_ai.usage.input_tokens": 1234,
          "gen_ai.tool.call.arguments": text.repeat(200),
          "gen_ai.tool.call.result": text.repeat(1_000),
        },
        status: { code: 2 as const, message: text.repeat(100) },
      }));
    const root = {
      ...base,
      attributes: { ...base.attributes, "gen_ai.input.messages": "顧客".repeat(40_000) },
    };
    for (const text of ["x", "顧客データ", "🙂"]) {
      const event = mapped([root, ...busy(text)]);
      expect(TaskCompletedV1.safeParse(event).success).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(event))).toBeLessThanOrEqual(defaultMaxEventBytes);
    }
    // A topic with a smaller limit: texts are cut further, then steps left out, until it fits.
    const small = mapTraceToTask([root, ...busy("顧客データ")], { ...mapping, maxEventBytes: 60_000 });
    if (!small.ok) throw new Error(small.reason);
    expect(Buffer.byteLength(JSON.stringify(small.event))).toBeLessThanOrEqual(60_000);
    expect(small.event.events.at(-1)?.content).toMatch(/left out \(the event's size limit\)$/);
    // One that cannot fit at all is refused with the reason, not published to be refused by Kafka.
    const tiny = mapTraceToTask([root], { ...mapping, maxEventBytes: 300 });
    expect(tiny.ok).toBe(false);
    expect(tiny.ok ? "" : tiny.reason).toMatch(/over the 300 the input topic takes/);
  });

  it("takes the outcome from the root: ok is success, a timeout error is timeout", () => {
    expect(mapped([base]).outcome).toBe("success");
    const timedOut = { ...base, status: { code: 2 as const, message: "deadline exceeded" } };
    expect(mapped([timedOut]).outcome).toBe("timeout");
    expect(mapped([timedOut]).error).toMatchObject({ category: "agent_error", message: "deadline exceeded" });
  });
});

describe("trace roots", () => {
  const sub = { ...base, spanId: "0000000000000002", parentSpanId: base.spanId, parentIsRemote: false };
  it("a sub-agent under a local parent is never a root; one under a remote parent is", () => {
    expect(isRootCandidate(sub)).toBe(false);
    expect(isRootCandidate({ ...sub, parentIsRemote: true })).toBe(true);
    expect(isRootCandidate({ ...sub, parentIsRemote: null })).toBe(true);
    expect(
      isRootCandidate({ ...sub, attributes: { "gen_ai.operation.name": "chat" }, parentIsRemote: true }),
    ).toBe(false);
  });

  it("the root is the parentless span, else the outermost invoke_agent whose parent is absent", () => {
    expect(findRoot([sub])).toBeNull();
    expect(findRoot([sub, base])).toBe(base);
    const remoteOuter = {
      ...base,
      spanId: "0000000000000003",
      parentSpanId: "00000000000000ff",
      parentIsRemote: true,
    };
    const innerUnknown = { ...sub, parentSpanId: remoteOuter.spanId, parentIsRemote: null };
    expect(findRoot([innerUnknown, remoteOuter])).toBe(remoteOuter);
    expect(findRoot([innerUnknown])).toBe(innerUnknown);
  });
});
