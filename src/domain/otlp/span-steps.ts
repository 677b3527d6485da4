import type { TaskCompleted } from "../contracts/task-completed.js";
import { plainStepText } from "./openinference.js";
import type { OtlpSpan } from "./otlp-span.js";
import { agentNameOf, cleanName, isoOf, messagesText, text } from "./span-values.js";
import { operationOf } from "./trace-root.js";

/** A trace's spans as the task's steps: who ran each, what failed, and the steps each span makes. */

/** For each span, the agent that ran it: the agent of the nearest `invoke_agent` span at or above it. */
export function actorsOf(spans: readonly OtlpSpan[]): Map<string, string | undefined> {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const actors = new Map<string, string | undefined>();
  const resolve = (span: OtlpSpan): string | undefined => {
    const path: OtlpSpan[] = [];
    let found: string | undefined;
    let current: OtlpSpan | undefined = span;
    // A producer could send a parent cycle: each span is visited once.
    const seen = new Set<string>();
    while (current && !seen.has(current.spanId)) {
      seen.add(current.spanId);
      if (actors.has(current.spanId)) {
        found = actors.get(current.spanId);
        break;
      }
      path.push(current);
      if (operationOf(current) === "invoke_agent") {
        found = agentNameOf(current);
        break;
      }
      current = current.parentSpanId === null ? undefined : byId.get(current.parentSpanId);
    }
    for (const visited of path) actors.set(visited.spanId, found);
    return found;
  };
  for (const span of spans) resolve(span);
  return actors;
}

export interface Failure {
  type: string | undefined;
  message: string | undefined;
}

/** Why a span failed, when it did: status error, `error.type`, or an exception event. */
export function failureOf(span: OtlpSpan): Failure | null {
  const exception = span.events.find((event) => event.name === "exception");
  const errorType = cleanName(span.attributes["error.type"]);
  if (span.status.code !== 2 && errorType === undefined && exception === undefined) return null;
  return {
    type: errorType ?? cleanName(exception?.attributes["exception.type"]),
    message:
      text(exception?.attributes["exception.message"]) ?? (span.status.message || undefined) ?? errorType,
  };
}

export function errorCategory(span: OtlpSpan): string {
  switch (operationOf(span)) {
    case "execute_tool":
      return "tool_error";
    case "llm":
      return "llm_error";
    case "invoke_agent":
      return "agent_error";
    default:
      return "error";
  }
}

/** A step before its text is cut to the budget. */
export interface Step {
  type: TaskCompleted["events"][number]["type"];
  eventId: string;
  timestamp: string;
  content: string;
  toolName?: string | undefined;
  actor?: string | undefined;
  metadata?: Record<string, string | number> | undefined;
  error?: { message?: string; code?: string } | undefined;
}

/**
 * What a step's own fields do not say: the model and its token counts. The span id is already in
 * the step's `eventId` (`<span id>.call`), and a step without any of these has no metadata (each
 * open map costs the contract a depth and size check).
 */
function metadataOf(span: OtlpSpan): Record<string, string | number> | undefined {
  const metadata: Record<string, string | number> = {};
  const model = cleanName(span.attributes["gen_ai.request.model"]);
  if (model) metadata.model = model;
  for (const [key, attribute] of [
    ["inputTokens", "gen_ai.usage.input_tokens"],
    ["outputTokens", "gen_ai.usage.output_tokens"],
  ] as const) {
    const value = span.attributes[attribute];
    if (typeof value === "number") metadata[key] = value;
  }
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

/** `consequence`: the span failed only because a span under it did (its step carries no error). */
export function stepsOf(span: OtlpSpan, actor: string | undefined, consequence = false): Step[] {
  const failure = consequence ? null : failureOf(span);
  const error = failure
    ? {
        ...(failure.message !== undefined ? { message: failure.message } : {}),
        ...(failure.type !== undefined ? { code: failure.type } : {}),
      }
    : undefined;
  const base = { actor, metadata: metadataOf(span) };
  const steps: Step[] = [];
  switch (operationOf(span)) {
    case "execute_tool": {
      const tool =
        cleanName(span.attributes["gen_ai.tool.name"]) ??
        cleanName(span.name.replace(/^execute_tool\s*/, ""));
      steps.push({
        ...base,
        type: "tool_call",
        eventId: `${span.spanId}.call`,
        timestamp: isoOf(span.startTimeUnixNano),
        content: text(span.attributes["gen_ai.tool.call.arguments"]) ?? `call ${tool ?? "tool"}`,
        toolName: tool,
      });
      steps.push({
        ...base,
        type: "tool_response",
        eventId: `${span.spanId}.response`,
        timestamp: isoOf(span.endTimeUnixNano),
        content:
          text(span.attributes["gen_ai.tool.call.result"]) ??
          (failure
            ? `${tool ?? "tool"} failed: ${failure.message ?? failure.type ?? "error"}`
            : `${tool ?? "tool"} returned`),
        toolName: tool,
        error,
      });
      break;
    }
    case "llm": {
      const input = messagesText(span.attributes["gen_ai.input.messages"]);
      const output = messagesText(span.attributes["gen_ai.output.messages"]);
      const model = cleanName(span.attributes["gen_ai.request.model"]) ?? "model";
      const content = [input, output !== undefined ? `→ ${output}` : undefined].filter(
        (t) => t !== undefined,
      );
      steps.push({
        ...base,
        type: "llm_call",
        eventId: `${span.spanId}.call`,
        timestamp: isoOf(span.startTimeUnixNano),
        content: content.length > 0 ? content.join("\n") : `${span.name || "chat"} (${model})`,
        error,
      });
      break;
    }
    case "invoke_agent":
      steps.push({
        ...base,
        type: "system_event",
        eventId: `${span.spanId}.agent`,
        timestamp: isoOf(span.startTimeUnixNano),
        content: `agent ${agentNameOf(span) ?? "?"} invoked`,
        error,
      });
      break;
    default:
      steps.push({
        ...base,
        type: "system_event",
        eventId: `${span.spanId}.span`,
        timestamp: isoOf(span.startTimeUnixNano),
        content: plainStepText(span),
        error,
      });
  }
  span.events.forEach((event, i) => {
    if (event.name !== "exception") return;
    const type = cleanName(event.attributes["exception.type"]);
    const message = text(event.attributes["exception.message"]);
    steps.push({
      ...base,
      type: "error_event",
      eventId: `${span.spanId}.exception.${String(i)}`,
      timestamp: isoOf(event.timeUnixNano),
      content: [type, message].filter((t) => t !== undefined).join(": ") || "exception",
      error: { ...(message !== undefined ? { message } : {}), ...(type !== undefined ? { code: type } : {}) },
    });
  });
  return steps;
}
