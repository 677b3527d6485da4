/** The phases of one input record's way through the consumer (`reflector_event_phase_seconds`). */
export type EventPhase = "fetch" | "queue" | "run" | "ordered" | "commit";

/** Where a phase's seconds go: the consumer metrics' histogram, or a test's recorder. */
export interface PhaseSink {
  observe(labels: { phase: EventPhase }, seconds: number): void;
}

/**
 * The timestamps of one record from its production to its commit; observed once, when its Kafka
 * transaction has committed. Tells an operator (and the latency benchmark) whether a slow event
 * waited for its batch to be fetched, for a slot or its loop family, for its own processing, for
 * earlier offsets of its partition, or for the transaction.
 */
export class EventPhases {
  private startedAt: number | null = null;
  private doneAt: number | null = null;

  /**
   * @param producedAt the record's timestamp (ms since the epoch, the producer's clock unless the
   * topic uses log-append time); a clock ahead of ours counts as no fetch wait
   * @param fetchedAt when its batch reached the consumer
   */
  constructor(
    private readonly producedAt: number,
    private readonly fetchedAt: number,
  ) {}

  started(now: number): void {
    this.startedAt = now;
  }

  finished(now: number): void {
    this.doneAt = now;
  }

  /** Observes every phase, given when its transaction began and when it committed. */
  committed(sink: PhaseSink, commitStartedAt: number, committedAt: number): void {
    const seconds = (from: number, to: number) => Math.max(0, to - from) / 1000;
    const started = this.startedAt ?? this.fetchedAt;
    const done = this.doneAt ?? started;
    if (Number.isFinite(this.producedAt) && this.producedAt > 0)
      sink.observe({ phase: "fetch" }, seconds(this.producedAt, this.fetchedAt));
    sink.observe({ phase: "queue" }, seconds(this.fetchedAt, started));
    sink.observe({ phase: "run" }, seconds(started, done));
    sink.observe({ phase: "ordered" }, seconds(done, commitStartedAt));
    sink.observe({ phase: "commit" }, seconds(commitStartedAt, committedAt));
  }
}
