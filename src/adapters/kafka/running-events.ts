import type { Work } from "./work.js";

/** One event of a partition while it runs: when it started, and how to tell it to stop. */
export interface RunningEvent {
  offset: string;
  work: Work;
  /** Its ordering key (the loop family), as the scheduler holds it. */
  key: string | null;
  startedAt: number;
  /** Aborted when the event is handed over: its run is told to stop, its end is ignored. */
  stop: AbortController;
}

/**
 * The events of one partition that are running, by offset. Pure: no Kafka, no timers. The pump
 * asks which have run longer than a bound (`overdue`) to hand a flooding tenant's slow events to
 * the retry topic, where they no longer hold the commits of the events after them.
 */
export class RunningEvents {
  private readonly events = new Map<string, RunningEvent>();

  /** Records that the event at `offset` starts; its signal ends with the partition's or its own stop. */
  start(offset: string, work: Work, key: string | null, now: number, partition: AbortSignal) {
    const stop = new AbortController();
    const event: RunningEvent = { offset, work, key, startedAt: now, stop };
    this.events.set(offset, event);
    return { event, signal: AbortSignal.any([partition, stop.signal]) };
  }

  end(offset: string): void {
    this.events.delete(offset);
  }

  /**
   * The events not stopped that `eligible` accepts and that started `afterMs` or more before
   * `now`, and how long until the next eligible one is due (Infinity when none is).
   */
  overdue(
    now: number,
    afterMs: number,
    eligible: (work: Work) => boolean,
  ): { due: RunningEvent[]; nextInMs: number } {
    const due: RunningEvent[] = [];
    let nextInMs = Number.POSITIVE_INFINITY;
    for (const event of this.events.values()) {
      if (event.stop.signal.aborted || !eligible(event.work)) continue;
      const left = event.startedAt + afterMs - now;
      if (left <= 0) due.push(event);
      else nextInMs = Math.min(nextInMs, left);
    }
    return { due, nextInMs };
  }

  get size(): number {
    return this.events.size;
  }
}
