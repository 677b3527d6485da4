import { describe, expect, it } from "vitest";
import { EventPhases, type EventPhase } from "../../../../src/adapters/kafka/event-phases.js";

function recorder() {
  const seen = new Map<EventPhase, number>();
  return {
    seen,
    observe: ({ phase }: { phase: EventPhase }, seconds: number) => {
      expect(seen.has(phase)).toBe(false);
      seen.set(phase, seconds);
    },
  };
}

describe("EventPhases", () => {
  it("splits a record's time into fetch, queue, run, ordered and commit", () => {
    const phases = new EventPhases(1_000, 1_040);
    phases.started(1_045);
    phases.finished(1_245);
    const sink = recorder();
    phases.committed(sink, 1_300, 1_320);
    expect(Object.fromEntries(sink.seen)).toEqual({
      fetch: 0.04,
      queue: 0.005,
      run: 0.2,
      ordered: 0.055,
      commit: 0.02,
    });
  });

  it("counts a producer clock ahead of ours as no fetch wait, and leaves out a missing timestamp", () => {
    const ahead = recorder();
    const early = new EventPhases(2_000, 1_000);
    early.started(1_000);
    early.finished(1_010);
    early.committed(ahead, 1_010, 1_020);
    expect(ahead.seen.get("fetch")).toBe(0);

    const none = recorder();
    const unknown = new EventPhases(Number("not a timestamp"), 1_000);
    unknown.committed(none, 1_000, 1_001);
    expect(none.seen.has("fetch")).toBe(false);
    // Never started (a batch committed by another path): no time is invented for it.
    expect(none.seen.get("run")).toBe(0);
    expect(none.seen.get("commit")).toBeCloseTo(0.001);
  });
});
