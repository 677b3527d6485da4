import { Counter, type Registry } from "prom-client";
import type { BridgeObserver } from "../pipeline/otlp-bridge-ports.js";
import type { Logger } from "./logger.js";

/** The OTLP bridge's counters (docs/otlp-ingest.md#metrics); labels stay bounded. */
export function createOtlpMetrics(registry: Registry, logger: Logger) {
  const records = new Counter({
    name: "reflector_otlp_records_total",
    help: "OTLP trace records read by the bridge, by encoding (json, protobuf, unknown) and result (ok, dead_lettered).",
    labelNames: ["encoding", "result"] as const,
    registers: [registry],
  });
  const spans = new Counter({
    name: "reflector_otlp_spans_total",
    help: "Spans the bridge stored, or dropped as late (their trace was already closed).",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const traces = new Counter({
    name: "reflector_otlp_traces_total",
    help: "Traces the bridge closed: published as a task event, expired (no root within OTLP_TRACE_TIMEOUT_MS), invalid (dead-lettered) oversized (past OTLP_MAX_SPANS_PER_TRACE or OTLP_MAX_TRACE_BYTES; dropped), or over_limit (new traces past the tenant's OTLP_NEW_TRACES_PER_MINUTE; dropped on arrival).",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const log = logger.child({ component: "otlp-bridge" });
  const observer: BridgeObserver = {
    spans: (result, count) => {
      spans.inc({ result }, count);
    },
    traces: (result, count) => {
      traces.inc({ result }, count);
    },
    expired: (traceId, spanCount) => {
      log.warn({ traceId, spanCount }, "trace expired: its root span never arrived; its spans were dropped");
    },
    oversized: (traceId, spanCount) => {
      log.warn(
        { traceId, spanCount },
        "trace closed as oversized: it passed OTLP_MAX_SPANS_PER_TRACE or OTLP_MAX_TRACE_BYTES; its spans were dropped",
      );
    },
    overLimit: (tenantId, count) => {
      log.warn(
        { tenantId, traces: count },
        "new traces dropped: the tenant started more than OTLP_NEW_TRACES_PER_MINUTE this minute",
      );
    },
    invalid: (traceId, reason) => {
      log.warn({ traceId, reason }, "the event built from a trace does not fit the contract; dead-lettered");
    },
  };
  return {
    observer,
    record: (encoding: string, result: "ok" | "dead_lettered") => {
      records.inc({ encoding, result });
    },
  };
}
