import type { TaskCompleted } from "../domain/contracts/index.js";
import type { OtlpSpan } from "../domain/otlp/otlp-span.js";

/**
 * A span with what the store needs to know at once: the tenant whose trace it joins (traces are
 * keyed by tenant and trace id, so one tenant's spans never join another's trace) and whether it
 * may be its trace's root.
 */
export interface IncomingSpan {
  tenantId: string;
  span: OtlpSpan;
  rootCandidate: boolean;
}

/** One trace: its tenant ('' for a trace stored before traces had one) and its id. */
export interface TraceRef {
  tenantId: string;
  traceId: string;
}

/** A claimed trace; its spans are read when asked for (a claim is never read whole at once). */
export interface ClosingTrace extends TraceRef {
  spans(): Promise<OtlpSpan[]>;
}

/**
 * What became of a claimed trace: published as an event, refused (dead-lettered), or put back to
 * wait because what looked like its root is not (its parent arrived meanwhile).
 */
export type TraceClosing = "published" | "invalid" | "wait";

/** What a trace may hold before it is closed as `oversized` (its spans dropped, later ones late). */
export interface TraceCaps {
  maxSpans: number;
  /** Bytes of the stored spans (their JSON). */
  maxBytes: number;
}

export interface AddResult {
  stored: number;
  late: number;
  /** Traces that passed a cap with this batch: closed, their spans dropped. */
  oversized: (TraceRef & { spanCount: number })[];
}

/**
 * Where the OTLP bridge keeps spans until their trace is complete (Postgres in production). Every
 * method is one transaction; adding the same span twice stores it once.
 */
export interface OtlpSpanStore {
  /**
   * Stores the spans; spans of a trace already closed are not stored and are counted as `late`. A
   * trace that would pass a cap is closed as oversized instead, and its spans are dropped.
   */
  add(spans: readonly IncomingSpan[], now: Date, caps: TraceCaps): Promise<AddResult>;
  /**
   * Claims up to `limit` open traces whose root arrived `graceMs` or longer ago, or that have a
   * root and were first seen `maxAgeMs` or longer ago (a trace that keeps sending new roots is
   * closed anyway), skipping traces another bridge holds; hands them to `close`, and marks each as
   * `close` says, in the same transaction (a trace put back waits for another root, or expires).
   * When `close` throws, nothing is marked, the traces stay open, and its error is thrown as it is.
   */
  closeReady(
    options: {
      now: Date;
      graceMs: number;
      maxAgeMs: number;
      limit: number;
      /** Only this tenant's traces (a bridge bound to one tenant never closes another's). */
      tenantId?: string | undefined;
    },
    close: (traces: readonly ClosingTrace[]) => Promise<ReadonlyMap<ClosingTrace, TraceClosing>>,
  ): Promise<number>;
  /**
   * Closes as expired the open traces first seen `timeoutMs` or longer ago that have no root yet,
   * dropping their spans; forgets closed traces older than `forgetAfterMs`.
   */
  expire(options: {
    now: Date;
    timeoutMs: number;
    forgetAfterMs: number;
    limit: number;
    /** Only this tenant's traces. */
    tenantId?: string | undefined;
  }): Promise<(TraceRef & { spanCount: number })[]>;
}

/** A task event built from a trace, with the W3C `traceparent` of the trace's root span. */
export interface BridgedEvent {
  event: TaskCompleted;
  traceparent: string;
}

export interface BridgePublisher {
  /**
   * Publishes the events to the input topic in sends its limits take; resolves once the brokers
   * acknowledged every one. An event whose record the topic would refuse (or refused) is
   * dead-lettered instead and returned: its trace is closed as invalid, alone.
   */
  publish(events: readonly BridgedEvent[]): Promise<ReadonlySet<BridgedEvent>>;
  /** A trace whose event cannot be built or published goes to the dead-letter topic with the reason. */
  deadLetter(trace: TraceRef, candidate: unknown, reason: string): Promise<void>;
}

/** What the bridge reports (metrics and logs are wired in app.ts). */
export interface BridgeObserver {
  spans(result: "stored" | "late", count: number): void;
  /** `over_limit`: new traces dropped on arrival, past the tenant's OTLP_NEW_TRACES_PER_MINUTE. */
  traces(result: "published" | "expired" | "invalid" | "oversized" | "over_limit", count: number): void;
  expired?(traceId: string, spanCount: number): void;
  invalid?(traceId: string, reason: string): void;
  oversized?(traceId: string, spanCount: number): void;
  overLimit?(tenantId: string, traces: number): void;
}
