import { classifyFailure, errorMessage, ReflectorError } from "../domain/errors.js";
import { mapTraceToTask, resourceTenant, type TraceMappingOptions } from "../domain/otlp/map-trace.js";
import type { OtlpSpan } from "../domain/otlp/otlp-span.js";
import { findRoot, isRootCandidate } from "../domain/otlp/trace-root.js";
import type {
  BridgedEvent,
  BridgeObserver,
  BridgePublisher,
  ClosingTrace,
  OtlpSpanStore,
  TraceCaps,
  TraceClosing,
} from "./otlp-bridge-ports.js";
import type { Clock } from "./ports.js";
import { withinNewTraceLimit, type NewTraceLimit } from "./tenant-limits.js";

export interface OtlpBridgeSettings {
  /** How long after its root arrived a trace waits for late children before it is published. */
  graceMs: number;
  /**
   * A trace whose root has not arrived this long after its first span is expired (dropped); one
   * with a root is published at this age even if new roots keep restarting its grace period.
   */
  timeoutMs: number;
  /** What one trace may hold; past it the trace is closed as oversized (OTLP_MAX_*_PER_TRACE). */
  caps?: TraceCaps;
  /**
   * Under TENANT_TOPIC_BINDING: the tenant every span read belongs to (the tenant bound to the
   * topic the bridge publishes to). A resource naming another tenant is refused.
   */
  boundTenant?: string | undefined;
  /**
   * The bytes an event's JSON may take on the input topic, asked at each close (the topic's limit
   * is read when the bridge starts); else the mapping's `maxEventBytes`.
   */
  maxEventBytes?: () => number;
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
  /**
   * New trace ids per tenant a minute (OTLP_NEW_TRACES_PER_MINUTE), shared with OTLP/HTTP: the
   * spans of new traces past it are dropped on arrival and counted. Absent: not limited here.
   */
  newTraces?: NewTraceLimit;
  /** A sweep that failed (Postgres or Kafka away); the next one tries again. */
  onSweepError(err: unknown): void;
}

/** Closed traces are remembered this long at least, so their late spans are recognised. */
const minForgetAfterMs = 3_600_000;
/** Events held before a send: each is at most one record's size, so memory stays a few records. */
const publishEveryBytes = 4 * 1024 * 1024;
export const defaultTraceCaps: TraceCaps = { maxSpans: 20_000, maxBytes: 64 * 1024 * 1024 };

// A Collector's resources carry a dozen attributes (host, process, SDK) on every span; only the
// ones the mapping reads are stored.
function keptResource(span: OtlpSpan, resourceKeys: readonly string[]): OtlpSpan["resource"] {
  const kept = Object.create(null) as OtlpSpan["resource"];
  for (const key of resourceKeys) {
    const value = span.resource[key];
    if (value !== undefined) kept[key] = value;
  }
  return kept;
}

/** The tenant a span's trace is kept under: the bound one, else what its resource names. */
function tenantOf(span: OtlpSpan, deps: Pick<OtlpBridgeDeps, "mapping" | "settings">): string {
  const named = resourceTenant(span.resource, deps.mapping);
  const bound = deps.settings.boundTenant;
  if (bound === undefined) return named;
  const attribute = deps.mapping.tenantAttribute;
  if (Object.hasOwn(span.resource, attribute) && named !== bound) {
    throw new ReflectorError(
      "TENANT_TOPIC_MISMATCH",
      `a span of trace ${span.traceId} names tenant ${JSON.stringify(named)}; this bridge publishes for tenant ${JSON.stringify(bound)} (TENANT_TOPIC_BINDING)`,
    );
  }
  return bound;
}

/**
 * Closes claimed traces one at a time, asking the store for each one's spans in turn (it reads a
 * few thousand spans at a time, never a whole claim), and publishes their events in sends of a
 * few megabytes. Each trace's failure is its own: an event the input
 * topic refuses, or a trace that cannot be mapped, is dead-lettered and closed as invalid while
 * the others are published. Only an outage (Kafka or Postgres away) fails the whole claim.
 */
async function closeTraces(
  deps: Pick<OtlpBridgeDeps, "publisher" | "observer" | "mapping" | "settings">,
  traces: readonly ClosingTrace[],
): Promise<Map<ClosingTrace, TraceClosing>> {
  const { publisher, observer, settings } = deps;
  const outcome = new Map<ClosingTrace, TraceClosing>();
  let pending: { trace: ClosingTrace; bridged: BridgedEvent }[] = [];
  let pendingBytes = 0;
  const invalid = async (trace: ClosingTrace, candidate: unknown, reason: string) => {
    await publisher.deadLetter(trace, candidate, reason);
    observer.invalid?.(trace.traceId, reason);
    outcome.set(trace, "invalid");
  };
  const flush = async () => {
    if (pending.length === 0) return;
    const sent = pending;
    pending = [];
    pendingBytes = 0;
    const refused = await publisher.publish(sent.map((p) => p.bridged));
    for (const { trace, bridged } of sent) {
      if (refused.has(bridged)) {
        observer.invalid?.(trace.traceId, "its event is larger than the input topic accepts");
        outcome.set(trace, "invalid");
      } else outcome.set(trace, "published");
    }
  };
  for (const trace of traces) {
    let mapped: ReturnType<typeof mapTraceToTask> | null;
    try {
      const spans = await trace.spans();
      mapped =
        findRoot(spans) === null
          ? null
          : mapTraceToTask(spans, {
              ...deps.mapping,
              ...(settings.maxEventBytes ? { maxEventBytes: settings.maxEventBytes() } : {}),
              ...(trace.tenantId !== "" ? { tenantId: trace.tenantId } : {}),
            });
    } catch (err) {
      if (classifyFailure(err) === "retry") throw err;
      await invalid(trace, null, `the trace could not be mapped: ${errorMessage(err)}`);
      continue;
    }
    if (mapped === null) {
      outcome.set(trace, "wait");
    } else if (mapped.ok) {
      pending.push({
        trace,
        bridged: { event: mapped.event, traceparent: `00-${trace.traceId}-${mapped.rootSpanId}-01` },
      });
      pendingBytes += mapped.bytes;
      if (pendingBytes >= publishEveryBytes) await flush();
    } else {
      await invalid(trace, mapped.candidate, mapped.reason);
    }
  }
  await flush();
  return outcome;
}

/** Claims and closes ready traces, a claim of `limit` at a time, until a claim comes back short. */
async function closeAllReady(deps: OtlpBridgeDeps, limit: number): Promise<void> {
  const { store, clock, settings, observer } = deps;
  for (;;) {
    let published = 0;
    let invalid = 0;
    const claimed = await store.closeReady(
      {
        now: clock.now(),
        graceMs: settings.graceMs,
        maxAgeMs: settings.timeoutMs,
        limit,
        // Bound to one tenant, a bridge closes that tenant's traces only: another tenant's bridge
        // shares the store and publishes to another topic.
        tenantId: settings.boundTenant,
      },
      async (traces) => {
        const outcome = await closeTraces(deps, traces);
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

/**
 * The OTLP bridge's work apart from Kafka: spans in (stored durably, offsets are committed by the
 * caller only after `ingest` resolves), complete traces out as one task event each. A trace is
 * marked published in the same Postgres transaction that claimed it, after the brokers
 * acknowledged its event; a crash between the two publishes it again with the same event id,
 * which the processor's event-id rule turns into nothing (docs/otlp-ingest.md).
 */
export function createOtlpBridge(deps: OtlpBridgeDeps) {
  const { store, clock, settings, observer } = deps;
  const limit = settings.tracesPerSweep ?? 500;
  const closers = settings.closers ?? 4;
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> = Promise.resolve();
  let running = false;
  const resourceKeys = [deps.mapping.tenantAttribute, deps.mapping.projectAttribute, "service.name"];

  /**
   * Closes what is ready, then expires what is overdue — whatever the closers did: a closer that
   * keeps failing (Kafka away) must not keep root-less traces and their spans for ever.
   */
  async function sweepOnce(): Promise<void> {
    const closed = await Promise.allSettled(
      Array.from({ length: closers }, () => closeAllReady(deps, limit)),
    );
    const expired = await store.expire({
      now: clock.now(),
      timeoutMs: settings.timeoutMs,
      forgetAfterMs: Math.max(minForgetAfterMs, settings.timeoutMs),
      limit: 1_000,
      tenantId: settings.boundTenant,
    });
    if (expired.length > 0) observer.traces("expired", expired.length);
    for (const trace of expired) observer.expired?.(trace.traceId, trace.spanCount);
    const failed = closed.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
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
      let incoming = spans.map((span) => ({
        tenantId: tenantOf(span, deps),
        span: { ...span, resource: keptResource(span, resourceKeys) },
        rootCandidate: isRootCandidate(span),
      }));
      if (deps.newTraces) incoming = await withinNewTraceLimit(deps.newTraces, incoming, observer);
      if (incoming.length === 0) return;
      const result = await store.add(incoming, clock.now(), settings.caps ?? defaultTraceCaps);
      if (result.stored > 0) observer.spans("stored", result.stored);
      if (result.late > 0) observer.spans("late", result.late);
      if (result.oversized.length > 0) observer.traces("oversized", result.oversized.length);
      for (const trace of result.oversized) observer.oversized?.(trace.traceId, trace.spanCount);
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
