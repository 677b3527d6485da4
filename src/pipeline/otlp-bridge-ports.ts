import type { TaskCompleted } from "../domain/contracts/index.js";
import type { OtlpSpan } from "../domain/otlp/otlp-span.js";

/** A span with what the store needs to know at once: whether it may be its trace's root. */
export interface IncomingSpan {
  span: OtlpSpan;
  rootCandidate: boolean;
}

export interface ClosingTrace {
  traceId: string;
  spans: OtlpSpan[];
}

/**
 * What became of a claimed trace: published as an event, refused by the contract (dead-lettered),
 * or put back to wait because what looked like its root is not (its parent arrived meanwhile).
 */
export type TraceClosing = "published" | "invalid" | "wait";

/**
 * Where the OTLP bridge keeps spans until their trace is complete (Postgres in production). Every
 * method is one transaction; adding the same span twice stores it once.
 */
export interface OtlpSpanStore {
  /** Stores the spans; spans of a trace already closed are not stored and are counted as `late`. */
  add(spans: readonly IncomingSpan[], now: Date): Promise<{ stored: number; late: number }>;
  /**
   * Claims up to `limit` open traces whose root arrived `graceMs` or longer ago (traces another
   * bridge holds are skipped), hands them to `close`, and marks each as `close` says, in the same
   * transaction (a trace put back waits for another root, or expires). When `close` throws, nothing is marked and the traces stay open.
   */
  closeReady(
    options: { now: Date; graceMs: number; limit: number },
    close: (traces: ClosingTrace[]) => Promise<Map<string, TraceClosing>>,
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
  }): Promise<{ traceId: string; spanCount: number }[]>;
}

/** A task event built from a trace, with the W3C `traceparent` of the trace's root span. */
export interface BridgedEvent {
  event: TaskCompleted;
  traceparent: string;
}

export interface BridgePublisher {
  /** Publishes the events to the input topic; resolves once the brokers acknowledged every one. */
  publish(events: readonly BridgedEvent[]): Promise<void>;
  /** A trace whose event the contract refuses goes to the dead-letter topic with the reason. */
  deadLetter(traceId: string, candidate: unknown, reason: string): Promise<void>;
}

/** What the bridge reports (metrics and logs are wired in app.ts). */
export interface BridgeObserver {
  spans(result: "stored" | "late", count: number): void;
  traces(result: "published" | "expired" | "invalid", count: number): void;
  expired?(traceId: string, spanCount: number): void;
  invalid?(traceId: string, reason: string): void;
}
