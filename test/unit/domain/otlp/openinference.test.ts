import { describe, expect, it } from "vitest";
import { TaskCompletedV1 } from "../../../../src/domain/contracts/index.js";
import { mapTraceToTask } from "../../../../src/domain/otlp/map-trace.js";
import { messagesOf, plainStepText, withOpenInference } from "../../../../src/domain/otlp/openinference.js";
import type { Attributes, OtlpSpan } from "../../../../src/domain/otlp/otlp-span.js";

const mapping = {
  tenantAttribute: "reflector.tenant_id",
  projectAttribute: "reflector.project_id",
  defaultTenant: "t",
  defaultProject: "p",
};
const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
let clock = 1_764_000_000_000;
function span(
  spanId: string,
  parent: string | null,
  name: string,
  attributes: Attributes,
  extra: Partial<OtlpSpan> = {},
): OtlpSpan {
  clock += 10;
  return {
    traceId,
    spanId,
    parentSpanId: parent,
    parentIsRemote: null,
    name,
    startTimeUnixNano: `${String(clock)}000000`,
    endTimeUnixNano: `${String(clock + 5)}000000`,
    attributes,
    events: [],
    status: { code: 0, message: "" },
    resource: { "service.name": "support-bot" },
    ...extra,
  };
}

/** A LangChain-style agent run as OpenInference's instrumentation exports it: the refund tool fails. */
function openInferenceRun(): OtlpSpan[] {
  const root = span(
    "00000000000000a1",
    null,
    "AgentExecutor",
    {
      "openinference.span.kind": "CHAIN",
      "session.id": "session-42",
      "input.value": "Refund order 1182 for the customer who was charged twice",
      "output.value": "I could not issue the refund.",
    },
    { status: { code: 2, message: "refund failed" } },
  );
  const retrieve = span("00000000000000a2", root.spanId, "retrieve_policy", {
    "openinference.span.kind": "RETRIEVER",
    "input.value": "refund policy double charge",
    "retrieval.documents.0.document.content": "Refunds over $500 need approval",
    "retrieval.documents.1.document.content": "Double charges are refunded in full",
  });
  const llm = span("00000000000000a3", root.spanId, "ChatOpenAI", {
    "openinference.span.kind": "LLM",
    "llm.model_name": "gpt-4o-mini",
    "llm.token_count.prompt": 321,
    "llm.token_count.completion": 42,
    "llm.input_messages.0.message.role": "system",
    "llm.input_messages.0.message.content": "You are a support agent.",
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.content": "Refund order 1182",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "issue_refund",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
      '{"order":"1182","amount":1200}',
  });
  const tool = span(
    "00000000000000a4",
    root.spanId,
    "issue_refund",
    {
      "openinference.span.kind": "TOOL",
      "tool.name": "issue_refund",
      "tool.parameters": '{"order":"1182","amount":1200}',
    },
    {
      status: { code: 2, message: "amount exceeds the approval limit" },
      events: [
        {
          name: "exception",
          timeUnixNano: `${String(clock + 3)}000000`,
          attributes: {
            "exception.type": "ApprovalRequired",
            "exception.message": "amount exceeds the approval limit",
          },
        },
      ],
    },
  );
  // The run ends after its steps.
  return [{ ...root, endTimeUnixNano: `${String(clock + 100)}000000` }, retrieve, llm, tool];
}

describe("OpenInference spans", () => {
  it("map to a task event as their GenAI equivalents would", () => {
    const result = mapTraceToTask(openInferenceRun(), mapping);
    if (!result.ok) throw new Error(result.reason);
    const event = TaskCompletedV1.parse(result.event);
    expect(event).toMatchObject({
      projectId: "support-bot",
      agentId: "AgentExecutor",
      loopId: "session-42",
      sessionId: "session-42",
      outcome: "failure",
      task: {
        description: "Refund order 1182 for the customer who was charged twice",
        answer: "I could not issue the refund.",
      },
      error: {
        category: "tool_error",
        type: "ApprovalRequired",
        message: "amount exceeds the approval limit",
        context: { toolName: "issue_refund" },
      },
    });
    const steps = event.events;
    const llmCall = steps.find((s) => s.type === "llm_call");
    expect(llmCall?.content).toContain("Refund order 1182");
    expect(llmCall?.content).toContain('tool call: issue_refund({"order":"1182","amount":1200})');
    expect(llmCall?.metadata).toEqual({ model: "gpt-4o-mini", inputTokens: 321, outputTokens: 42 });
    expect(steps.find((s) => s.type === "tool_call")).toMatchObject({
      toolName: "issue_refund",
      content: '{"order":"1182","amount":1200}',
    });
    expect(steps.find((s) => s.type === "tool_response")).toMatchObject({
      toolName: "issue_refund",
      error: { code: "ApprovalRequired" },
    });
    // The run failed because its tool did: the run's own step is not the one to blame.
    expect(steps.find((s) => s.eventId === "00000000000000a1.span")?.error).toBeUndefined();
    expect(steps.find((s) => s.eventId === "00000000000000a2.span")?.content).toBe(
      "retrieve_policy (retriever)\ninput: refund policy double charge\n→ 2 documents retrieved",
    );
  });

  it("names an AGENT span's agent and reads its input as the task", () => {
    const agent = span("00000000000000b1", null, "triage", {
      "openinference.span.kind": "AGENT",
      "agent.name": "triage-agent",
      "input.value": "Sort today's tickets",
    });
    const result = mapTraceToTask([agent], mapping);
    if (!result.ok) throw new Error(result.reason);
    expect(result.event).toMatchObject({
      agentId: "triage-agent",
      task: { description: "Sort today's tickets" },
    });
    expect(result.event.events[0]?.content).toBe("agent triage-agent invoked");
  });

  it("never replaces a gen_ai attribute the span carries, and leaves other spans as they are", () => {
    const both = span("00000000000000c1", null, "chat", {
      "openinference.span.kind": "LLM",
      "llm.model_name": "from-openinference",
      "gen_ai.request.model": "from-genai",
    });
    expect(withOpenInference(both).attributes["gen_ai.request.model"]).toBe("from-genai");
    expect(withOpenInference(both).attributes["gen_ai.operation.name"]).toBe("chat");
    const plain = span("00000000000000c2", null, "execute_tool x", {
      "gen_ai.operation.name": "execute_tool",
    });
    expect(withOpenInference(plain)).toBe(plain);
    expect(plainStepText(plain)).toBe("execute_tool x");
  });

  it("reads messages with content parts, in index order (10 after 9)", () => {
    const attributes: Attributes = {};
    for (let i = 0; i <= 10; i += 1) {
      attributes[`llm.input_messages.${String(i)}.message.role`] = "user";
      attributes[`llm.input_messages.${String(i)}.message.contents.0.message_content.text`] = `m${String(i)}`;
    }
    const parsed = JSON.parse(messagesOf(attributes, "llm.input_messages") ?? "[]") as {
      parts: { content: string }[];
    }[];
    expect(parsed.map((m) => m.parts[0]?.content)).toEqual(
      Array.from({ length: 11 }, (_, i) => `m${String(i)}`),
    );
    expect(messagesOf({}, "llm.input_messages")).toBeUndefined();
  });
});
