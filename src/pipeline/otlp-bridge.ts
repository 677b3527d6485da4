import { mapTraceToTask, type TraceMappingOptions } from "../domain/otlp/map-trace.js";
import type { OtlpSpan } from "../domain/otlp/otlp-span.js";
import { findRoot, isRootCandidate } from "../domain/otlp/trace-root.js";
import type {
  BridgedEvent,
  BridgeObserver,
  BridgePublisher,
  OtlpSpanStore,
  TraceClosing,
} from "./otlp-bridge-ports.js";
import type { Clock } from "./ports.js";

export interface OtlpBridgeSettings {
  /** How long after its root arrived a trace waits for late children before it is published. */
  graceMs: number;
  /** A trace whose root has not arrived this long after its first span is expired (dropped). */
  timeoutMs: number;
  /** How often ready and expired traces are looked for. */
  sweepIntervalMs: number;
  /** Traces closed per transaction. */
  tracesPerSweep?: number;
  /**
   * Transactions closing traces at once: while one waits for Kafka or Postgres, another maps its
   * traces (they claim different traces: `FOR UPDATE SKIP LOCKED`).
   */
  closers?: number;
}

export interface OtlpBridgeDeps {
  store: OtlpSpanStore;
  publisher: BridgePublisher;
  clock: Clock;
  mapping: TraceMappingOptions;
  settings: OtlpBridgeSettings;
  observer: BridgeObserver;
  /** A sweep that failed (Postgres or Kafka away); the next one tries again. */
  onSweepError(err: unknown): void;
}

/** Closed traces are remembered this long at least, so their late spans are recognised. */
const minForgetAfterMs = 3_600_000;

/**
 * The OTLP bridge's work apart from Kafka: spans in (stored durably, offsets are committed by the
 * caller only after `ingest` resolves), complete traces out as one task event each. A trace is
 * marked published in the same Postgres transaction that claimed it, after the brokers
 * acknowledged its event; a crash between the two publishes it again with the same event id,
 * which the processor's event-id rule turns into nothing (docs/otlp-ingest.md).
 */
export function createOtlpBridge(deps: OtlpBridgeDeps) {
  const { store, publisher, clock, settings, observer } = deps;
  const limit = settings.tracesPerSweep ?? 500;
  const closers = settings.closers ?? 4;
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> = Promise.resolve();
  let running = false;

  // A Collector's resources carry a dozen attributes (host, process, SDK) on every span; only the
  // ones the mapping reads are stored.
  const resourceKeys = [deps.mapping.tenantAttribute, deps.mapping.projectAttribute, "service.name"];
  function keptResource(span: OtlpSpan): OtlpSpan["resource"] {
    const kept = Object.create(null) as OtlpSpan["resource"];
    for (const key of resourceKeys) {
      const value = span.resource[key];
      if (value !== undefined) kept[key] = value;
    }
    return kept;
  }

  async function close(traces: { traceId: string; spans: OtlpSpan[] }[]): Promise<Map<string, TraceClosing>> {
    const outcome = new Map<string, TraceClosing>();
    const events: BridgedEvent[] = [];
    for (const trace of traces) {
      if (findRoot(trace.spans) === null) {
        outcome.set(trace.traceId, "wait");
        continue;
      }
      const mapped = mapTraceToTask(trace.spans, deps.mapping);
      if (mapped.ok) {
        events.push({ event: mapped.event, traceparent: `00-${trace.traceId}-${mapped.rootSpanId}-01` });
        outcome.set(trace.traceId, "published");
      } else {
        await publisher.deadLetter(trace.traceId, mapped.candidate, mapped.reason);
        observer.invalid?.(trace.traceId, mapped.reason);
        outcome.set(trace.traceId, "invalid");
      }
    }
    if (events.length > 0) await publisher.publish(events);
    return outcome;
  }

  async function closeAllReady(): Promise<void> {
    for (;;) {
      let published = 0;
      let invalid = 0;
      const claimed = await store.closeReady(
        { now: clock.now(), graceMs: settings.graceMs, limit },
        async (traces) => {
          const outcome = await close(traces);
          for (const result of outcome.values()) {
            if (result === "published") published += 1;
            else if (result === "invalid") invalid += 1;
          }
          return outcome;
        },
      );
      if (published > 0) observer.traces("published", published);
      if (invalid > 0) observer.traces("invalid", invalid);
      if (claimed < limit) break;
    }
  }

  async function sweepOnce(): Promise<void> {
    await Promise.all(Array.from({ length: closers }, closeAllReady));
    const expired = await store.expire({
      now: clock.now(),
      timeoutMs: settings.timeoutMs,
      forgetAfterMs: Math.max(minForgetAfterMs, settings.timeoutMs),
      limit: 1_000,
    });
    if (expired.length > 0) observer.traces("expired", expired.length);
    for (const trace of expired) observer.expired?.(trace.traceId, trace.spanCount);
  }

  function schedule(): void {
    if (!running) return;
    timer = setTimeout(() => {
      sweeping = sweepOnce()
        .catch((err: unknown) => {
          deps.onSweepError(err);
        })
        .finally(schedule);
    }, settings.sweepIntervalMs);
  }

  return {
    /** Stores the spans of consumed records; resolves once they are durable. */
    async ingest(spans: readonly OtlpSpan[]): Promise<void> {
      if (spans.length === 0) return;
      const result = await store.add(
        spans.map((span) => ({
          span: { ...span, resource: keptResource(span) },
          rootCandidate: isRootCandidate(span),
        })),
        clock.now(),
      );
      if (result.stored > 0) observer.spans("stored", result.stored);
      if (result.late > 0) observer.spans("late", result.late);
    },

    /** Publishes every ready trace and expires the overdue ones (what the timer does). */
    sweep(): Promise<void> {
      return sweepOnce();
    },

    start(): void {
      if (running) return;
      running = true;
      schedule();
    },

    /** Stops the timer and waits for a sweep in progress. */
    async stop(): Promise<void> {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await sweeping;
    },
  };
}

export type OtlpBridge = ReturnType<typeof createOtlpBridge>;
