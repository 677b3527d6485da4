import { cutMiddle } from "../contracts/cut-text.js";
import { TaskCompletedV1, type TaskCompleted } from "../contracts/task-completed.js";
import { plainStepText, withOpenInference } from "./openinference.js";
import type { AttributeValue, Attributes, OtlpSpan } from "./otlp-span.js";
import { byStart, findRoot, operationOf } from "./trace-root.js";

/** Where tenant and project come from (settings OTLP_TENANT_ATTRIBUTE, OTLP_DEFAULT_TENANT, …). */
export interface TraceMappingOptions {
  tenantAttribute: string;
  projectAttribute: string;
  defaultTenant: string;
  defaultProject: string;
  /**
   * The largest event, in bytes of its JSON (UTF-8), that the input topic takes with the record's
   * key and headers; texts are cut, then steps left out, until the event fits. Default
   * `defaultMaxEventBytes`.
   */
  maxEventBytes?: number;
  /**
   * The trace's tenant when the caller knows it (the tenant bound to the topic its spans came
   * from, or the one they were stored under); else the root's resource attribute, else the default.
   */
  tenantId?: string;
}

/** Under Kafka's default 1 MB record limit with room for the key, the headers and the framing. */
export const defaultMaxEventBytes = 900_000;

export type TraceMapping =
  | {
      ok: true;
      event: TaskCompleted;
      rootSpanId: string;
      /** The event's JSON in UTF-8 bytes (what the budget measured). */
      bytes: number;
    }
  | { ok: false; reason: string; candidate: unknown };

/** The contract's bound on trace steps; a longer trace keeps its first steps and says how many were left out. */
const maxEvents = 2_000;
/** Text of all steps together, before the event is measured in bytes (`maxEventBytes`). */
const stepTextBudgetChars = 400_000;
/** Texts are cut to at most this fraction of their usual length before steps are left out. */
const smallestTextScale = 1 / 64;
const minStepChars = 500;
const maxStepChars = 8_000;

/** The event id of a trace's event: the same on every run, so a re-publish is a duplicate the processor drops. */
export function eventIdOfTrace(traceId: string): string {
  return `otlp-${traceId}`;
}

/** Control characters the contract refuses in names and ids become spaces; cut to `max`. */
function cleanName(value: AttributeValue | undefined, max = 200): string | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const text = String(value)
    // eslint-disable-next-line no-control-regex -- removing them is the point
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .trim()
    .slice(0, max)
    .toWellFormed()
    .trim();
  return text.length > 0 ? text : undefined;
}

/**
 * The tenant a resource names (`tenantAttribute`, cleaned like every name), or the default. Under
 * a tenant binding the caller gives the bound tenant instead and refuses a resource naming another.
 */
export function resourceTenant(
  resource: Attributes,
  options: Pick<TraceMappingOptions, "tenantAttribute" | "defaultTenant">,
): string {
  return (
    cleanName(
      Object.hasOwn(resource, options.tenantAttribute) ? resource[options.tenantAttribute] : undefined,
    ) ?? options.defaultTenant
  );
}

/** The text trimmed, or undefined when nothing is left. */
function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim() ?? "";
  return trimmed.length > 0 ? trimmed : undefined;
}

function text(value: AttributeValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** ISO time of a nanosecond timestamp (millisecond precision, as the contract's datetimes). */
function isoOf(unixNano: string): string {
  return new Date(Number(BigInt(unixNano) / 1_000_000n)).toISOString();
}

/**
 * The text of GenAI messages (`gen_ai.input.messages` / `gen_ai.output.messages`: a JSON array of
 * `{role, parts: [{type: "text", content}]}`), or the value as it is when it has another shape.
 * Content is opt-in in the conventions: most spans carry none, and then there is none here.
 */
function messagesText(value: AttributeValue | undefined, role?: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  let messages: unknown = value;
  if (typeof value === "string") {
    try {
      messages = JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (!Array.isArray(messages)) return text(value);
  const texts: string[] = [];
  for (const message of messages as unknown[]) {
    if (typeof message !== "object" || message === null) continue;
    const m = message as { role?: unknown; parts?: unknown; content?: unknown };
    if (role !== undefined && m.role !== role) continue;
    if (typeof m.content === "string") texts.push(m.content);
    if (!Array.isArray(m.parts)) continue;
    for (const part of m.parts as unknown[]) {
      const p = part as { type?: unknown; content?: unknown } | null;
      if (p?.type === "text" && typeof p.content === "string") texts.push(p.content);
    }
  }
  return texts.length > 0 ? texts.join("\n") : undefined;
}

function agentNameOf(span: OtlpSpan): string | undefined {
  return (
    cleanName(span.attributes["gen_ai.agent.name"]) ??
    cleanName(span.attributes["gen_ai.agent.id"]) ??
    cleanName(span.name.replace(/^invoke_agent\s*/, ""))
  );
}

/** For each span, the agent that ran it: the agent of the nearest `invoke_agent` span at or above it. */
function actorsOf(spans: readonly OtlpSpan[]): Map<string, string | undefined> {
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

interface Failure {
  type: string | undefined;
  message: string | undefined;
}

/** Why a span failed, when it did: status error, `error.type`, or an exception event. */
function failureOf(span: OtlpSpan): Failure | null {
  const exception = span.events.find((event) => event.name === "exception");
  const errorType = cleanName(span.attributes["error.type"]);
  if (span.status.code !== 2 && errorType === undefined && exception === undefined) return null;
  return {
    type: errorType ?? cleanName(exception?.attributes["exception.type"]),
    message:
      text(exception?.attributes["exception.message"]) ?? (span.status.message || undefined) ?? errorType,
  };
}

function errorCategory(span: OtlpSpan): string {
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

const timeoutPattern = /time[\s_-]?out|timed[\s_-]?out|deadline/i;

/** A step before its text is cut to the budget. */
interface Step {
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
function stepsOf(span: OtlpSpan, actor: string | undefined, consequence = false): Step[] {
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

function resourceName(resource: Attributes, key: string): string | undefined {
  return Object.hasOwn(resource, key) ? cleanName(resource[key]) : undefined;
}

/**
 * The UTF-8 length of `value`'s JSON, as the producer will encode it (a lone surrogate as U+FFFD);
 * when even three bytes a character would fit `maxBytes`, its character count (a lower bound that
 * cannot change the verdict) without reading every character.
 */
function jsonBytes(value: unknown, maxBytes: number): number {
  const text = JSON.stringify(value);
  if (text.length * 3 <= maxBytes) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The steps as the event carries them: at most `keep` (a longer trace keeps its first steps and one
 * saying how many were left out), their texts sharing a budget scaled by `scale`.
 */
function stepsWithin(all: readonly Step[], root: OtlpSpan, scale: number, keep: number): Step[] {
  const limit = Math.min(maxEvents, keep);
  const kept = all.length > limit ? all.slice(0, limit - 1) : all;
  const stepChars = Math.ceil(
    scale *
      Math.max(
        minStepChars,
        Math.min(maxStepChars, Math.floor(stepTextBudgetChars / Math.max(1, Math.min(limit, all.length)))),
      ),
  );
  const steps = kept.map((step) => ({
    ...step,
    content: cutMiddle(step.content, stepChars),
    ...(step.error?.message !== undefined
      ? { error: { ...step.error, message: cutMiddle(step.error.message, stepChars) } }
      : {}),
  }));
  if (all.length > limit) {
    const left = all.length - kept.length;
    steps.push({
      type: "system_event",
      eventId: "otlp.steps-left-out",
      timestamp: kept.at(-1)?.timestamp ?? isoOf(root.endTimeUnixNano),
      content:
        limit === maxEvents
          ? `${String(left)} more steps of this trace were left out (the contract keeps ${String(maxEvents)})`
          : `${String(left)} more steps of this trace were left out (the event's size limit)`,
    });
  }
  return steps;
}

/**
 * One `agent.task.completed` event from the spans of one complete trace (docs/otlp-ingest.md has
 * the mapping as a table; OpenInference attributes are read as their GenAI equivalents). Pure and deterministic: the same spans give the same event, field for
 * field, so an event published again after a crash is the same event. Validated with the
 * contract the processor reads; a trace that still does not fit it is reported with the reason.
 */
export function mapTraceToTask(received: readonly OtlpSpan[], options: TraceMappingOptions): TraceMapping {
  // OpenInference spans read as their GenAI equivalents (openinference.ts).
  const spans = received.map(withOpenInference);
  const root = findRoot(spans);
  if (root === null) return { ok: false, reason: "the trace has no root span", candidate: null };
  const ordered = [...spans].sort(byStart);
  const actors = actorsOf(ordered);
  const resource = root.resource;
  const traceId = root.traceId;
  const conversation =
    cleanName(root.attributes["gen_ai.conversation.id"]) ??
    ordered
      .map((span) => cleanName(span.attributes["gen_ai.conversation.id"]))
      .find((id) => id !== undefined);

  // A root that failed because a step under it did is the consequence, not a step to blame: its
  // own step carries no error, so the attribution looks at the step that failed first.
  const childFailed = spans.some((span) => span !== root && failureOf(span) !== null);
  const allSteps = ordered.flatMap((span) =>
    stepsOf(span, actors.get(span.spanId), span === root && childFailed),
  );
  const failed = [...spans]
    .map((span) => ({ span, failure: failureOf(span) }))
    .filter((f): f is { span: OtlpSpan; failure: Failure } => f.failure !== null)
    .sort((a, b) => {
      // The first span to fail: the earliest to end (a failing child ends before the parents it fails).
      const d = BigInt(a.span.endTimeUnixNano) - BigInt(b.span.endTimeUnixNano);
      return d < 0n ? -1 : d > 0n ? 1 : byStart(a.span, b.span);
    })[0];
  const rootFailure = failureOf(root);
  const outcome =
    root.status.code === 2
      ? timeoutPattern.test(`${rootFailure?.type ?? ""} ${rootFailure?.message ?? ""}`)
        ? "timeout"
        : "failure"
      : "success";

  const agentId = agentNameOf(root) ?? resourceName(resource, "service.name") ?? "agent";
  const input = messagesText(root.attributes["gen_ai.input.messages"], "user");
  const output = messagesText(root.attributes["gen_ai.output.messages"]);
  const tool = failed ? cleanName(failed.span.attributes["gen_ai.tool.name"]) : undefined;
  const build = (scale: number, keep: number) => {
    return {
      schemaVersion: 1,
      eventId: eventIdOfTrace(traceId),
      tenantId: options.tenantId ?? resourceTenant(resource, options),
      projectId:
        resourceName(resource, options.projectAttribute) ??
        resourceName(resource, "service.name") ??
        options.defaultProject,
      agentId,
      ...(conversation !== undefined ? { sessionId: conversation } : {}),
      taskId: traceId,
      loopId: conversation ?? traceId,
      occurredAt: isoOf(root.endTimeUnixNano),
      task: {
        description: cutMiddle(
          nonBlank(input) ?? `${nonBlank(root.name) ?? "invoke_agent"} (trace ${traceId})`,
          Math.ceil(16_000 * scale),
        ),
        ...(input !== undefined ? { query: cutMiddle(input, Math.ceil(64_000 * scale)) } : {}),
        ...(output !== undefined ? { answer: cutMiddle(output, Math.ceil(64_000 * scale)) } : {}),
      },
      outcome,
      ...(failed
        ? {
            error: {
              category: errorCategory(failed.span),
              ...(failed.failure.type !== undefined ? { type: failed.failure.type } : {}),
              message: cutMiddle(
                nonBlank(failed.failure.message) ??
                  failed.failure.type ??
                  `${nonBlank(failed.span.name) ?? "span"} failed`,
                Math.ceil(16_000 * scale),
              ),
              context: {
                traceId,
                spanId: failed.span.spanId,
                span: failed.span.name.slice(0, 200),
                ...(actors.get(failed.span.spanId) !== undefined
                  ? { agent: actors.get(failed.span.spanId) }
                  : {}),
                ...(tool !== undefined ? { toolName: tool } : {}),
              },
            },
          }
        : {}),
      events: stepsWithin(allSteps, root, scale, keep),
    };
  };
  // Cut texts, then leave steps out, until the event's bytes fit: a trace of CJK text, or of 2,000
  // steps each with its own metadata, would otherwise outgrow the topic's record limit.
  const maxBytes = options.maxEventBytes ?? defaultMaxEventBytes;
  let scale = 1;
  let keep = maxEvents;
  let candidate = build(scale, keep);
  let bytes = jsonBytes(candidate, maxBytes);
  while (bytes > maxBytes && (scale > smallestTextScale || keep > 1)) {
    if (scale > smallestTextScale) scale /= 2;
    else keep = Math.max(1, Math.floor(keep / 2));
    candidate = build(scale, keep);
    bytes = jsonBytes(candidate, maxBytes);
  }
  if (bytes > maxBytes) {
    return {
      ok: false,
      reason: `the event would be ${String(bytes)} bytes even cut down, over the ${String(maxBytes)} the input topic takes`,
      candidate: null,
    };
  }
  const parsed = TaskCompletedV1.safeParse(candidate);
  if (!parsed.success) {
    const reason = parsed.error.issues
      .slice(0, 10)
      .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`)
      .join("; ");
    return { ok: false, reason, candidate };
  }
  return { ok: true, event: parsed.data, rootSpanId: root.spanId, bytes };
}
