import { cutMiddle } from "../contracts/cut-text.js";
import { describeIssues } from "../contracts/parse-contract.js";
import { TaskCompletedV1, type TaskCompleted } from "../contracts/task-completed.js";
import { withOpenInference } from "./openinference.js";
import type { Attributes, OtlpSpan } from "./otlp-span.js";
import { actorsOf, errorCategory, failureOf, stepsOf, type Failure } from "./span-steps.js";
import { agentNameOf, cleanName, isoOf, messagesText, nonBlank, resourceName } from "./span-values.js";
import { jsonBytes, maxEvents, smallestTextScale, stepsWithin } from "./step-budget.js";
import { byStart, findRoot } from "./trace-root.js";

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

/** The event id of a trace's event: the same on every run, so a re-publish is a duplicate the processor drops. */
export function eventIdOfTrace(traceId: string): string {
  return `otlp-${traceId}`;
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

const timeoutPattern = /time[\s_-]?out|timed[\s_-]?out|deadline/i;

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
    const reason = describeIssues(parsed.error);
    return { ok: false, reason, candidate };
  }
  return { ok: true, event: parsed.data, rootSpanId: root.spanId, bytes };
}
