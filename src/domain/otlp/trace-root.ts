import type { OtlpSpan } from "./otlp-span.js";

/** GenAI operations (semantic conventions `gen_ai.operation.name`) the mapping tells apart. */
export type GenAiOperation = "invoke_agent" | "execute_tool" | "llm" | "other";

const llmOperations = new Set(["chat", "text_completion", "generate_content"]);

/** The span's GenAI operation: `gen_ai.operation.name`, else the first word of its name. */
export function operationOf(span: OtlpSpan): GenAiOperation {
  const attribute = span.attributes["gen_ai.operation.name"];
  const name = typeof attribute === "string" ? attribute : (span.name.split(" ")[0] ?? "");
  if (name === "invoke_agent" || name === "execute_tool") return name;
  if (llmOperations.has(name)) return "llm";
  return "other";
}

/**
 * Whether this span may be its trace's root: it has no parent, or it is an `invoke_agent` span
 * whose parent is in another process (the agent was called by a service whose spans never reach
 * this topic), or whose exporter does not say where its parent is. A sub-agent's `invoke_agent`
 * under a local parent is never a root. Spans are exported when they end, so a root that arrived
 * has ended.
 */
export function isRootCandidate(span: OtlpSpan): boolean {
  if (span.parentSpanId === null) return true;
  return operationOf(span) === "invoke_agent" && span.parentIsRemote !== false;
}

/**
 * The root of a trace's spans: the span without a parent; else the outermost `invoke_agent` that
 * may be a root (its parent is not among the spans), the earliest started first. Null when the
 * trace has no root yet.
 */
export function findRoot(spans: readonly OtlpSpan[]): OtlpSpan | null {
  const ids = new Set(spans.map((span) => span.spanId));
  const roots = spans.filter(
    (span) => isRootCandidate(span) && (span.parentSpanId === null || !ids.has(span.parentSpanId)),
  );
  roots.sort((a, b) => rootRank(a) - rootRank(b) || byStart(a, b));
  return roots[0] ?? null;
}

/** A span without a parent outranks an `invoke_agent` under a remote parent. */
function rootRank(span: OtlpSpan): number {
  return span.parentSpanId === null ? 0 : 1;
}

function earlier(a: OtlpSpan, b: OtlpSpan): boolean {
  const d = BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano);
  return d < 0n || (d === 0n && a.spanId < b.spanId);
}

/** Orders spans by start time (then span id, so the order is the same on every run). */
export function byStart(a: OtlpSpan, b: OtlpSpan): number {
  if (a === b) return 0;
  return earlier(a, b) ? -1 : 1;
}
