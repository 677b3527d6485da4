import type { OtlpSpan } from "../../src/domain/otlp/otlp-span.js";
import type {
  AddResult,
  ClosingTrace,
  OtlpSpanStore,
  TraceClosing,
} from "../../src/pipeline/otlp-bridge-ports.js";

interface Trace {
  tenantId: string;
  traceId: string;
  state: "open" | "published" | "invalid" | "oversized" | "expired";
  firstSeen: number;
  rootSeen: number | null;
  closedAt: number | null;
  spanCount: number;
  spanBytes: number;
  /** spanId → span, while the trace is open. */
  spans: Map<string, OtlpSpan>;
}

/**
 * In-memory OtlpSpanStore: the Postgres store's contract (test/contract/otlp-span-store.contract.ts)
 * without Postgres. A trace is keyed by tenant and trace id; a root restarts its grace; it counts
 * every span it receives while open (a batch read twice counts twice, a span is stored once);
 * past a cap it is closed as oversized; a claimed trace is closed as `close` says, or put back to
 * wait for another root.
 */
export function createFakeSpanStore() {
  const traces = new Map<string, Trace>();
  const keyOf = (tenantId: string, traceId: string) => JSON.stringify([tenantId, traceId]);
  const mine = (trace: Trace, tenantId: string | undefined) =>
    tenantId === undefined || trace.tenantId === tenantId;

  const store: OtlpSpanStore = {
    add(spans, now, caps) {
      const at = now.getTime();
      const batch = new Map<string, typeof spans>();
      for (const s of spans) {
        const key = keyOf(s.tenantId, s.span.traceId);
        batch.set(key, [...(batch.get(key) ?? []), s]);
      }
      const result: AddResult = { stored: 0, late: 0, oversized: [] };
      for (const [key, incoming] of [...batch].sort(([a], [b]) => a.localeCompare(b))) {
        const first = incoming[0];
        if (!first) continue;
        const root = incoming.some((s) => s.rootCandidate);
        let trace = traces.get(key);
        if (!trace) {
          trace = {
            tenantId: first.tenantId,
            traceId: first.span.traceId,
            state: "open",
            firstSeen: at,
            rootSeen: null,
            closedAt: null,
            spanCount: 0,
            spanBytes: 0,
            spans: new Map(),
          };
          traces.set(key, trace);
        }
        if (trace.state !== "open") {
          result.late += incoming.length;
          continue;
        }
        if (root) trace.rootSeen = Math.max(trace.rootSeen ?? at, at);
        trace.spanCount += incoming.length;
        trace.spanBytes += incoming.reduce((sum, s) => sum + Buffer.byteLength(JSON.stringify(s.span)), 0);
        if (trace.spanCount > caps.maxSpans || trace.spanBytes > caps.maxBytes) {
          result.late += incoming.length;
          result.oversized.push({
            tenantId: trace.tenantId,
            traceId: trace.traceId,
            spanCount: trace.spanCount,
          });
          trace.state = "oversized";
          trace.closedAt = at;
          trace.spans.clear();
          continue;
        }
        for (const s of incoming) {
          if (trace.spans.has(s.span.spanId)) continue;
          trace.spans.set(s.span.spanId, structuredClone(s.span));
          result.stored += 1;
        }
      }
      return Promise.resolve(result);
    },

    async closeReady({ now, graceMs, maxAgeMs, limit, tenantId }, close) {
      const at = now.getTime();
      const claimed = [...traces.values()]
        .filter(
          (t) =>
            t.state === "open" &&
            mine(t, tenantId) &&
            t.rootSeen !== null &&
            (t.rootSeen <= at - graceMs || t.firstSeen <= at - maxAgeMs),
        )
        .sort((a, b) => (a.rootSeen ?? 0) - (b.rootSeen ?? 0))
        .slice(0, limit);
      if (claimed.length === 0) return 0;
      const handed = new Map<ClosingTrace, Trace>(
        claimed.map((t) => [
          {
            tenantId: t.tenantId,
            traceId: t.traceId,
            spans: () => Promise.resolve([...t.spans.values()].map((s) => structuredClone(s))),
          },
          t,
        ]),
      );
      // When `close` throws, nothing is marked: its error goes out as it is.
      const outcome: ReadonlyMap<ClosingTrace, TraceClosing> = await close([...handed.keys()]);
      for (const [closing, result] of outcome) {
        const trace = handed.get(closing);
        if (!trace) continue;
        if (result === "wait") {
          trace.rootSeen = null;
          continue;
        }
        trace.state = result;
        trace.closedAt = at;
        trace.spans.clear();
      }
      return claimed.length;
    },

    expire({ now, timeoutMs, forgetAfterMs, limit, tenantId }) {
      const at = now.getTime();
      const doomed = [...traces.values()]
        .filter(
          (t) =>
            t.state === "open" && t.rootSeen === null && mine(t, tenantId) && t.firstSeen <= at - timeoutMs,
        )
        .sort((a, b) => a.firstSeen - b.firstSeen)
        .slice(0, limit);
      for (const trace of doomed) {
        trace.state = "expired";
        trace.closedAt = at;
        trace.spans.clear();
      }
      for (const [key, trace] of traces) {
        if (trace.state !== "open" && trace.closedAt !== null && trace.closedAt < at - forgetAfterMs) {
          traces.delete(key);
        }
      }
      return Promise.resolve(
        doomed.map((t) => ({ tenantId: t.tenantId, traceId: t.traceId, spanCount: t.spanCount })),
      );
    },
  };
  return { store, traces };
}
