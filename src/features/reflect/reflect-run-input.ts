import { parseContract } from "../../domain/contracts/parse-contract.js";
import type { TaskCompleted } from "../../domain/contracts/index.js";
import { ReflectorError } from "../../domain/errors.js";
import { mapTraceToTask, type TraceMappingOptions } from "../../domain/otlp/map-trace.js";
import { parseOtlpTraceRequest } from "../../domain/otlp/otlp-span.js";
import { cleanName } from "../../domain/otlp/span-values.js";
import { TaskCompletedV1 } from "../../domain/contracts/task-completed.js";

/**
 * What `POST /api/v1/reflect` takes, read into the event the pipeline processes: a task-completed
 * event in the JSON shape the Kafka topic carries (the same contract, read by the same parser), or
 * an OTLP/JSON trace export of one run, mapped by the OTLP bridge's mapping (the same event id,
 * `otlp-<traceId>`, so the same trace sent to the bridge is the same run).
 */

export type RunInput =
  | { ok: true; event: TaskCompleted; from: "task_event" | "otlp" }
  | { ok: false; status: 400 | 403; message: string; issues: string[] };

const refused = (status: 400 | 403, message: string, issues = [message]): RunInput => ({
  ok: false,
  status,
  message,
  issues,
});

function issuesOf(reason: string): string[] {
  return reason.split("; ").map((issue) => `body.${issue}`);
}

function fromTaskEvent(tenantId: string, body: unknown): RunInput {
  let event: TaskCompleted;
  try {
    event = parseContract(TaskCompletedV1, body);
  } catch (err) {
    if (err instanceof ReflectorError) return refused(400, err.message, issuesOf(err.message));
    throw err;
  }
  if (event.tenantId !== tenantId)
    return refused(403, `the event's tenantId is ${event.tenantId}; this API key's tenant is ${tenantId}`);
  return { ok: true, event, from: "task_event" };
}

function fromOtlp(tenantId: string, body: unknown, mapping: TraceMappingOptions): RunInput {
  const parsed = parseOtlpTraceRequest(body, {
    uniqueResourceKeys: [mapping.tenantAttribute, mapping.projectAttribute],
  });
  if (!parsed.ok) return refused(400, parsed.reason, issuesOf(parsed.reason));
  const traces = new Set(parsed.spans.map((span) => span.traceId));
  if (traces.size !== 1)
    return refused(400, `one run is one trace: the export holds ${String(traces.size)} trace ids`);
  for (const span of parsed.spans) {
    const named = Object.hasOwn(span.resource, mapping.tenantAttribute)
      ? cleanName(span.resource[mapping.tenantAttribute])
      : undefined;
    if (named !== undefined && named !== tenantId)
      return refused(403, `a resource names tenant ${named}; this API key's tenant is ${tenantId}`);
  }
  const mapped = mapTraceToTask(parsed.spans, { ...mapping, tenantId });
  if (!mapped.ok) return refused(400, `the trace cannot be read as a run: ${mapped.reason}`);
  return { ok: true, event: mapped.event, from: "otlp" };
}

/** An OTLP export has `resourceSpans`; anything else is read as a task-completed event. */
export function runInputOf(tenantId: string, body: unknown, mapping: TraceMappingOptions): RunInput {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return refused(400, "the body must be a task-completed event or an OTLP/JSON trace export (an object)");
  return Object.hasOwn(body, "resourceSpans")
    ? fromOtlp(tenantId, body, mapping)
    : fromTaskEvent(tenantId, body);
}
